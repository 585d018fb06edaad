// Loading behaviour. Vitest gives each test file its own module graph, so the package starts
// unloaded here whatever other files did.
import { describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import * as webmpc from '../dist/index.js';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './helpers.js';

describe('init', () => {
  it('kernels refuse to run before init() with NOT_INITIALIZED', () => {
    expect(webmpc.isReady()).toBe(false);
    let caught: unknown;
    try {
      webmpc.aesFixedKeyEncrypt(new Uint8Array(16));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(webmpc.WebmpcError);
    expect(caught).not.toBeInstanceOf(webmpc.KernelError);
    expect((caught as webmpc.WebmpcError).code).toBe('NOT_INITIALIZED');
  });

  it('a load that fails is reported as WASM_LOAD_FAILED and can be retried', async () => {
    const bad = webmpc.init({ wasm: new Uint8Array([0, 1, 2, 3]) });
    await expect(bad).rejects.toBeInstanceOf(webmpc.WebmpcError);
    await expect(bad).rejects.toMatchObject({ code: 'WASM_LOAD_FAILED' });
    expect(webmpc.isReady()).toBe(false);
  });

  it('concurrent init() calls share one load; init and ready are idempotent', async () => {
    const bytes = await readFile(new URL('../dist/wasm-gen/webmpc_bg.wasm', import.meta.url));
    // Explicit bytes here, the default location in the other test files: both paths get used.
    await Promise.all([webmpc.init({ wasm: bytes }), webmpc.init(), webmpc.ready()]);
    expect(webmpc.isReady()).toBe(true);
    await webmpc.init();
    await webmpc.ready();
    const out = webmpc.aesEncrypt(
      Uint8Array.from(Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex')),
      Uint8Array.from(Buffer.from('00112233445566778899aabbccddeeff', 'hex')),
    );
    expect(Buffer.from(out).toString('hex')).toBe('69c4e0d86a7b0430d8cdb78070b4c55a');
  });

  it('the package entry exports exactly the documented surface', () => {
    expect(Object.keys(webmpc).sort()).toEqual(
      [
        'BLOCK_BYTES',
        'CircuitError',
        'EnclaveAbort',
        'KernelError',
        'MAX_OTS_PER_CALL',
        'MAX_OT_THREADS',
        'MAX_RUNS',
        'MAX_UINT_WIDTH',
        'OT_MESSAGE_BYTES',
        'OtReceiver',
        'OtSender',
        'PreparedCircuit',
        'Prg',
        'ProtocolAbort',
        'Session',
        'TransportError',
        'WebmpcError',
        'circuit',
        'createMemoryTransports',
        'decodeUint',
        'encodeUint',
        'net',
        'otReceiver',
        'otSender',
        'prepareCircuit',
        'program',
        'TeleportOtReceiver',
        'TeleportOtSender',
        'teleportedRandomOt',
        'teleportOtReceiver',
        'teleportOtSender',
        'session',
        'aesEncrypt',
        'aesFixedKeyEncrypt',
        'backendName',
        'fixedKey',
        'gf128InnerProduct',
        'gf128Mul',
        'hashCcr',
        'hashCr',
        'hashTccr',
        'hashTccrCounter',
        'init',
        'isReady',
        'prestartWorker',
        'randomBytes',
        'ready',
        'sigma',
        'transpose128xN',
        'transposeNx128',
      ].sort(),
    );
  });

  it('in Node, init() and a session in an engine worker never load the fetch implementation (undici)', async () => {
    // Touching the `Response` or `Request` global loads undici (30-160 ms per thread): a fresh
    // process, since this one's test runner may have loaded it already.
    const script = `
      const m = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist/index.js')).href)});
      await m.init();
      const [a, b] = m.createMemoryTransports(2);
      const s = await Promise.all([a, b].map((transport, party) => m.session({ transport, party, parties: 2, worker: true })));
      await Promise.all(s.map((x) => x.ready()));
      await Promise.all(s.map((x) => x.close()));
      console.log(JSON.stringify(process.moduleLoadList.filter((x) => x.includes('undici'))));
    `;
    // A file, not `-e`: the engine worker inherits the process's flags, and `--input-type` is
    // refused there.
    const dir = mkdtempSync(join(tmpdir(), 'webmpc-init-'));
    try {
      const file = join(dir, 'probe.mjs');
      writeFileSync(file, script);
      const out = await new Promise<string>((resolve, reject) =>
        execFile(process.execPath, [file], { timeout: 60_000 }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
      );
      expect(JSON.parse(out)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
