// Issue 10 (session half): one party's local failure must not leave the others waiting. A bad
// input fails at once for that party (INVALID_ARGUMENT, before anything is sent) and its
// transport is closed with the cause, so the peer's run rejects within a second instead of
// timing out after 60 s; and nothing is left to keep a Node process alive. Also Session.close()
// and Symbol.asyncDispose.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { init, TransportError, WebmpcError } from '../../dist/index.js';
import { CircuitBuilder } from '../../dist/circuit/index.js';
import { DIST } from '../helpers.js';
import { be, hex, pair, rejection } from './helpers.js';

beforeAll(async () => {
  await init();
});

function comparison() {
  const b = new CircuitBuilder();
  const x = b.input(0, 32);
  const y = b.input(1, 32);
  b.output(x.gt(y).toUInt());
  return b.build();
}

const badInputs: [string, unknown[], RegExp][] = [
  ['a wrong-length input', [new Uint8Array(3)], /circuit input 0 .*4 bytes, not 3/],
  ['a missing input', [], /party 0 owns 1 input value of the circuit \(input 0\); 0 given/],
  ['an input that is not bytes', ['00000007'], /must be a Uint8Array/],
];

describe('a local failure reaches the peers at once', () => {
  const c = comparison();

  for (const [what, inputs, text] of badInputs) {
    for (const peerFirst of [true, false]) {
      it(`${what} (${peerFirst ? 'peer already waiting' : 'peer starts later'}): INVALID_ARGUMENT here, PEER_DISCONNECTED at the peer within a second`, async () => {
        // Transports whose recv deadline is far away: only the failure can end the peer's wait.
        const [s0, s1, close, transports] = await pair(60_000);
        let peerRun: Promise<{ error: any; at: number }> | undefined;
        if (peerFirst) {
          peerRun = rejection(s1.run(c, { inputs: [be(5, 4)] }));
          await new Promise((r) => setTimeout(r, 50)); // party 1 is now blocked on party 0's record
        }
        const sentBefore = s0.bytesSent;
        const mine = await rejection(s0.run(c, { inputs: inputs as Uint8Array[] }));
        expect(mine.error).toBeInstanceOf(WebmpcError);
        expect(mine.error.code).toBe('INVALID_ARGUMENT');
        expect(mine.error.message).toMatch(text);
        expect(s0.bytesSent).toBe(sentBefore); // nothing was sent
        // This party's transport is closed, with the cause.
        expect(await transports[0]!.closed).toBe(mine.error);
        peerRun ??= rejection(s1.run(c, { inputs: [be(5, 4)] }));
        const peer = await peerRun;
        expect(peer.error).toBeInstanceOf(TransportError);
        expect(peer.error).toMatchObject({ code: 'PEER_DISCONNECTED', peer: 0 });
        // The close frame carries the cause: the peer learns why, not only that party 0 left.
        expect(peer.error.remote).toMatchObject({ code: 'INVALID_ARGUMENT' });
        expect(peer.at - mine.at).toBeLessThan(1000);
        await close();
      });
    }
  }

  it('a bad argument to preprocess also closes the transport, and the peer stops waiting', async () => {
    const [s0, s1, close] = await pair(60_000);
    const peerRun = rejection(s1.preprocess('yao2pc'));
    await new Promise((r) => setTimeout(r, 50));
    const mine = await rejection(s0.preprocess('yao2pc', { garbler: 3 }));
    expect(mine.error).toMatchObject({ code: 'INVALID_ARGUMENT' });
    const peer = await peerRun;
    expect(peer.error).toMatchObject({ code: 'PEER_DISCONNECTED', peer: 0 });
    expect(peer.at - mine.at).toBeLessThan(1000);
    await close();
  });

  it('a failing party leaves no timer or handle behind: a Node script exits at once without closing anything', () => {
    const dir = mkdtempSync(join(tmpdir(), 'webmpc-session-'));
    try {
      const script = join(dir, 'fail.mjs');
      const sdk = pathToFileURL(join(DIST, 'index.js')).href;
      // Party 0 passes a 3-byte value for a 32-bit input; party 1 is honest and already waiting.
      // The transports' recv deadline is 60 s: if anything waited for it, the script would hang.
      writeFileSync(
        script,
        `import { init, session, createMemoryTransports, circuit } from ${JSON.stringify(sdk)};
await init();
const b = new circuit.CircuitBuilder();
b.output(b.input(0, 32).gt(b.input(1, 32)).toUInt());
const c = b.build();
const [t0, t1] = createMemoryTransports(2, { recvTimeoutMs: 60000 });
const [s0, s1] = await Promise.all([session({ transport: t0, party: 0, parties: 2 }), session({ transport: t1, party: 1, parties: 2 })]);
const peer = s1.run(c, { inputs: [new Uint8Array(4)] }).catch((e) => e.code);
const mine = await s0.run(c, { inputs: [new Uint8Array(3)] }).catch((e) => e.code);
console.log(JSON.stringify([mine, await peer]));
`,
      );
      const t = performance.now();
      const r = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 20_000 });
      const ms = performance.now() - t;
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual(['INVALID_ARGUMENT', 'PEER_DISCONNECTED']);
      expect(ms).toBeLessThan(10_000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('Session.close', () => {
  const c = comparison();

  it('closes the transport, frees the session, and refuses later runs with CLOSED; Symbol.asyncDispose does the same', async () => {
    const [s0, s1, close, transports] = await pair();
    const [o0] = await Promise.all([s0.run(c, { inputs: [be(9, 4)] }), s1.run(c, { inputs: [be(5, 4)] })]);
    expect(hex(o0[0])).toBe('01');
    await s0.close();
    await s0.close(); // idempotent
    expect(await transports[0]!.closed).toBeUndefined(); // closed gracefully, not failed
    await expect(s0.run(c, { inputs: [be(9, 4)] })).rejects.toMatchObject({ code: 'CLOSED' });
    await expect(s0.preprocess('yao2pc')).rejects.toMatchObject({ code: 'CLOSED' });
    // The peer learns it has nobody to compute with.
    await expect(s1.run(c, { inputs: [be(5, 4)] })).rejects.toMatchObject({ code: 'PEER_DISCONNECTED' });
    expect(typeof Symbol.asyncDispose).toBe('symbol');
    await s1[Symbol.asyncDispose]();
    await expect(s1.run(c, { inputs: [be(5, 4)] })).rejects.toMatchObject({ code: 'CLOSED' });
    await close();
  });

  it('close() during a run stops it; the run rejects and the peer rejects too', async () => {
    const [s0, s1, close] = await pair();
    const b = new CircuitBuilder();
    let acc = b.input(0, 64);
    const y = b.input(1, 64);
    for (let i = 0; i < 2000; i++) acc = acc.add(y).xor(y);
    b.output(acc);
    const long = b.build();
    let closing: Promise<void> | undefined;
    const results = await Promise.allSettled([
      s0.run(long, { inputs: [new Uint8Array(8)], onProgress: (p) => void (p.phase === 'evaluating' && (closing ??= s0.close())) }),
      s1.run(long, { inputs: [new Uint8Array(8)] }),
    ]);
    await closing;
    for (const r of results) expect(r.status).toBe('rejected');
    expect((results[0] as PromiseRejectedResult).reason).toBeInstanceOf(TransportError);
    await close();
  });

  it('a Node script over a WebSocket mesh exits once its sessions are closed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'webmpc-session-'));
    try {
      const script = join(dir, 'ws.mjs');
      const sdk = pathToFileURL(join(DIST, 'index.js')).href;
      const netNode = pathToFileURL(join(DIST, 'net', 'node.js')).href;
      // Both parties in one process over real sockets: the listener and the sockets would keep
      // Node alive if close() left them open.
      writeFileSync(
        script,
        `import { init, session, circuit } from ${JSON.stringify(sdk)};
import { connectWebSocketMesh, listenWebSocket } from ${JSON.stringify(netNode)};
await init();
const b = new circuit.CircuitBuilder();
b.output(b.input(0, 32).gt(b.input(1, 32)).toUInt());
const c = b.build();
const listener = await listenWebSocket({ port: 0, host: '127.0.0.1' });
const [t0, t1] = await Promise.all([
  connectWebSocketMesh({ party: 0, parties: 2, session: 'exit-test', peers: [undefined, listener.url] }),
  connectWebSocketMesh({ party: 1, parties: 2, session: 'exit-test', peers: [], listener }),
]);
const [s0, s1] = await Promise.all([session({ transport: t0, party: 0, parties: 2 }), session({ transport: t1, party: 1, parties: 2 })]);
const [o0] = await Promise.all([s0.run(c, { inputs: [Uint8Array.of(0, 0, 0, 9)] }), s1.run(c, { inputs: [Uint8Array.of(0, 0, 0, 5)] })]);
console.log(JSON.stringify(Array.from(o0[0])));
await Promise.all([s0.close(), s1.close()]);
`,
      );
      const r = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 30_000 });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual([1]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
