// What the enclave-server's host and the network see (issue 17, item 7): the evaluator's own
// secrets reach the enclave sealed, as the garbler's seed does, so a curious host that records
// every frame it relays cannot derive the ROT receiver's choice bits from them; and the SDK
// refuses a plaintext ws:// URL to anything but loopback unless the caller opts in.
import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMemoryTransports, session, teleportOtReceiver, teleportOtSender, type Transport } from '../../dist/index.js';
import { EnclaveLink } from '../../dist/enclave/index.js';
import { WebSocket } from 'ws';
import { nodeWebSocket } from '../../dist/net/node.js';
import { circuitFile, enclaveFor, serverForFile } from './helpers.js';

const serverOf = serverForFile();
const NodeWebSocket = await nodeWebSocket();

/** The first 128 choice bits a seed k2 gives (`webmpc_teleport::rot`: bit i of AES_k2(0), LSB-first). */
function choicesOf(k2: Uint8Array): number[] {
  const c = createCipheriv('aes-128-ecb', k2, null);
  c.setAutoPadding(false);
  const block = Buffer.concat([c.update(Buffer.alloc(16)), c.final()]);
  return Array.from({ length: 128 }, (_, i) => (block[i >> 3]! >> (i & 7)) & 1);
}

describe('what the enclave-server host sees', () => {
  it("a host recording every frame it relays cannot derive the ROT receiver's choice bits", async () => {
    // Every frame the receiver sends to the server: what the host (and the network) gets.
    const sent: Buffer[] = [];
    class Recording extends WebSocket {
      override send(data: Uint8Array, ...rest: unknown[]) {
        sent.push(Buffer.from(data));
        return (super.send as (...a: unknown[]) => void)(data, ...rest);
      }
    }
    const [a, b] = createMemoryTransports(2, { recvTimeoutMs: 20_000 }) as [Transport, Transport];
    const id = new Uint8Array(randomBytes(32));
    {
      const enclave = enclaveFor(serverOf());
      const [s, r] = await Promise.all([
        teleportOtSender({ transport: a, peer: 1, sessionId: id, mode: 'semi-honest', enclave }),
        teleportOtReceiver({ transport: b, peer: 0, sessionId: id, mode: 'semi-honest', enclave: { ...enclave, WebSocket: Recording as never } }),
      ]);
      const [, got] = await Promise.all([s.sendRandom(1_000), r.receiveRandom(1_000)]);
      s.free();
      await r.free();
      const want = Array.from(got.choices.subarray(0, 128));
      // Every 16-byte window of every frame, tried as k2: none gives the receiver's choices.
      let windows = 0;
      for (const f of sent) {
        for (let i = 0; i + 16 <= f.length; i++) {
          windows++;
          expect(choicesOf(f.subarray(i, i + 16)), `a k2 in the clear at byte ${i} of a ${f.length}-byte frame`).not.toEqual(want);
        }
      }
      expect(windows).toBeGreaterThan(16);
    }
  });
});

describe('plaintext WebSockets', () => {
  const refused = { code: 'INVALID_ARGUMENT', message: expect.stringMatching(/ws:\/\/.*allowPlaintextWebSocket|allowPlaintextWebSocket.*ws:\/\//s) };

  it('EnclaveLink refuses ws:// to a non-loopback host before connecting, unless the caller opts in', async () => {
    for (const url of ['ws://192.0.2.1:8790', 'ws://enclave.example:8790', 'ws://[2001:db8::1]:8790']) {
      await expect(EnclaveLink.connect({ url, WebSocket: NodeWebSocket, connectTimeoutMs: 300 })).rejects.toMatchObject(refused);
    }
    // Opting in gets past the check (and then fails to reach the documentation address).
    await expect(
      EnclaveLink.connect({ url: 'ws://192.0.2.1:8790', WebSocket: NodeWebSocket, connectTimeoutMs: 300, allowPlaintextWebSocket: true } as never),
    ).rejects.toMatchObject({ code: 'ENCLAVE_UNAVAILABLE' });
    // Loopback is fine in the clear: the evaluator runs beside the server.
    for (const host of ['127.0.0.1', 'localhost', '[::1]', '127.8.9.10']) {
      const err = await EnclaveLink.connect({ url: `ws://${host}:1`, WebSocket: NodeWebSocket, connectTimeoutMs: 300 }).catch((e) => e);
      expect(err.code, host).toBe('ENCLAVE_UNAVAILABLE');
    }
  });

  it('teleport-yao refuses the evaluator a plaintext non-loopback enclave URL before anything is sent', async () => {
    const [a, b] = createMemoryTransports(2, { recvTimeoutMs: 5_000 }) as [Transport, Transport];
    const sessions = await Promise.all([a, b].map((t, p) => session({ transport: t, party: p, parties: 2 })));
    const c = circuitFile('aes_128.txt');
    try {
      const enclave = { ...enclaveFor(serverOf()), url: 'ws://enclave.example:8790', connectTimeoutMs: 300 };
      const err = await sessions[1]!
        .run(c, { inputs: [new Uint8Array(16)], protocol: 'teleport-yao', mode: 'malicious', enclave })
        .catch((e) => e);
      expect(err).toMatchObject(refused);
      // Nothing reached the peer.
      const got = await a.recv(1, { timeoutMs: 200 }).then((m) => m.length, () => undefined);
      expect(got).toBeUndefined();
    } finally {
      await Promise.all(sessions.map((s) => s.close().catch(() => {})));
    }
    // With the opt-in the URL passes the check (the run then fails to reach that host).
    const [a2, b2] = createMemoryTransports(2, { recvTimeoutMs: 5_000 }) as [Transport, Transport];
    const fresh = await Promise.all([a2, b2].map((t, p) => session({ transport: t, party: p, parties: 2 })));
    try {
      const optIn = { ...enclaveFor(serverOf()), url: 'ws://enclave.example:8790', connectTimeoutMs: 300, allowPlaintextWebSocket: true };
      const [, e2] = await Promise.allSettled([
        fresh[0]!.run(c, { inputs: [new Uint8Array(16)], protocol: 'teleport-yao', mode: 'malicious', enclave: enclaveFor(serverOf()) }),
        fresh[1]!.run(c, { inputs: [new Uint8Array(16)], protocol: 'teleport-yao', mode: 'malicious', enclave: optIn }),
      ]);
      expect((e2 as PromiseRejectedResult).reason.code).toBe('ENCLAVE_UNAVAILABLE');
    } finally {
      c.free();
      await Promise.all(fresh.map((s) => s.close().catch(() => {})));
    }
  });
});
