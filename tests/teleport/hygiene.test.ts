// Secret hygiene in the teleport module (webmpc_teleport_bg.wasm), which is a Wasm instance of
// its own with its own linear memory: after teleported OT sessions are freed, none of the OT
// messages either party saw is left anywhere in that memory (the zero-on-free allocator and the
// stack scrub of webmpc-bindings-glue, which every module links, are what make this pass). The
// main module's hygiene is tests/hygiene.test.ts.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryTransports, init, teleportOtReceiver, teleportOtSender, type Transport } from '../../dist/index.js';
import { _moduleMemory } from '../../dist/engine/modules.js';
import { enclaveFor, startServer } from './helpers.js';

let server: Awaited<ReturnType<typeof startServer>>;

beforeAll(async () => {
  await init();
  server = await startServer();
});

afterAll(async () => {
  await server?.close();
});

/** The 16-byte blocks of `bytes` found anywhere in `memory`, as `index@offset`. */
function leaks(memory: { buffer: ArrayBuffer }, bytes: Uint8Array): string[] {
  const hay = Buffer.from(memory.buffer);
  const found: string[] = [];
  for (let j = 0; j + 16 <= bytes.length; j += 16) {
    const at = hay.indexOf(bytes.subarray(j, j + 16));
    if (at !== -1) found.push(`${j / 16}@${at}`);
  }
  return found;
}

describe('no secret is left in the teleport module’s memory', () => {
  for (const mode of ['semi-honest', 'malicious'] as const) {
    it(`teleported random OT, ${mode}: messages and chosen messages, once the sessions are freed`, async () => {
      const [a, b] = createMemoryTransports(2, { recvTimeoutMs: 20_000 }) as [Transport, Transport];
      const sessionId = new Uint8Array(randomBytes(32));
      const enclave = enclaveFor(server);
      const [s, r] = await Promise.all([
        teleportOtSender({ transport: a, peer: 1, sessionId, mode, enclave }),
        teleportOtReceiver({ transport: b, peer: 0, sessionId, mode, enclave }),
      ]);
      const [{ m0, m1 }, got] = await Promise.all([s.sendRandom(1000), r.receiveRandom(1000)]);
      s.free();
      await r.free();
      await Promise.all([a.close(), b.close()]);
      const memory = _moduleMemory('teleport');
      expect(memory, 'the teleport module was loaded by the first setup').toBeDefined();
      expect(m0.length).toBe(16_000);
      // The scan finds a message block where there is one (so an empty result means something).
      const planted = new Uint8Array(4096);
      planted.set(m1.subarray(16 * 7, 16 * 8), 1000);
      expect(leaks({ buffer: planted.buffer }, m1)).toEqual(['7@1000']);
      expect(leaks(memory!, m0)).toEqual([]);
      expect(leaks(memory!, m1)).toEqual([]);
      expect(leaks(memory!, got.messages)).toEqual([]);
    });
  }
});
