// teleport-yao through the SDK against the enclave-server's simulation backend (a real
// webmpc-enclave-program process behind a WebSocket): every reference circuit with its known
// answer (AES-128 FIPS-197, SHA-256 "abc", the arithmetic circuits against BigInt) in both modes,
// outputs to both parties; one attested session (one enclave program) for every run of an SDK
// session; the garbler's traffic independent of the circuit size; argument refusals before
// anything is sent; progress and cancellation.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { circuit as circuits, init, WebmpcError } from '../../dist/index.js';
import { WebSocket as NodeWs } from 'ws';
import { both, circuitFile, enclaveFor, hex, pair, startServer, unhex } from './helpers.js';

const MODES = ['semi-honest', 'malicious'] as const;
const MASK64 = (1n << 64n) - 1n;
const be64 = (x: bigint) => unhex((x & MASK64).toString(16).padStart(16, '0'));
const big = (b: Uint8Array | undefined) => BigInt(`0x${hex(b)}`);

let server: Awaited<ReturnType<typeof startServer>>;

beforeAll(async () => {
  await init();
  server = await startServer();
});

afterAll(async () => {
  await server?.close();
});

describe('teleport-yao known answers', () => {
  for (const mode of MODES) {
    it(`every reference circuit, AES-128 and SHA-256, ${mode}, outputs to both parties`, async () => {
      const { sessions, close } = await pair();
      const enclave = enclaveFor(server);
      const run = async (file: string, inputs: Uint8Array[], owners?: number[]) => {
        const c = circuitFile(file);
        const own = owners ?? inputs.map((_, i) => i);
        const mine = (p: number) => inputs.filter((_, i) => own[i] === p);
        const [g, e] = await Promise.all(
          sessions.map((s, p) => s.run(c, { inputs: mine(p), owners: own, protocol: 'teleport-yao', mode, enclave })),
        );
        expect(g!.map(hex), `${file}: both parties learn the same`).toEqual(e!.map(hex));
        expect(e!.map(hex), `${file}: against plaintext evaluation`).toEqual(c.evaluate(inputs).map(hex));
        c.free();
        return e!;
      };
      try {
        const aes = await run('aes_128.txt', [unhex('000102030405060708090a0b0c0d0e0f'), unhex('00112233445566778899aabbccddeeff')]);
        expect(hex(aes[0])).toBe('69c4e0d86a7b0430d8cdb78070b4c55a');
        const zero = await run('aes_128.txt', [new Uint8Array(16), new Uint8Array(16)]);
        expect(hex(zero[0])).toBe('66e94bd4ef8a2c3b884cfa59ca342b2e');
        // The evaluator may own the key instead.
        const swapped = await run('aes_128.txt', [unhex('000102030405060708090a0b0c0d0e0f'), unhex('00112233445566778899aabbccddeeff')], [1, 0]);
        expect(hex(swapped[0])).toBe('69c4e0d86a7b0430d8cdb78070b4c55a');
        const block = unhex(`61626380${'0'.repeat(128 - 8 - 2)}18`);
        const iv = unhex('6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19');
        const sha = await run('sha256.txt', [block, iv]);
        expect(hex(sha[0])).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
        for (let k = 0; k < 2; k++) {
          const a = BigInt(`0x${randomBytes(8).toString('hex')}`);
          const b = BigInt(`0x${randomBytes(8).toString('hex')}`);
          expect(big((await run('adder64.txt', [be64(a), be64(b)]))[0])).toBe((a + b) & MASK64);
          expect(big((await run('sub64.txt', [be64(a), be64(b)]))[0])).toBe((a - b) & MASK64);
          expect(big((await run('mult64.txt', [be64(a), be64(b)]))[0])).toBe((a * b) & MASK64);
          // One-input circuits: all inputs the garbler's, then all the evaluator's.
          expect(big((await run('neg64.txt', [be64(a)], [0]))[0])).toBe(-a & MASK64);
          expect(big((await run('neg64.txt', [be64(b)], [1]))[0])).toBe(-b & MASK64);
          expect(big((await run('zero_equal.txt', [be64(a)], [1]))[0])).toBe(0n);
        }
        expect(big((await run('zero_equal.txt', [be64(0n)], [0]))[0])).toBe(1n);
      } finally {
        await close();
      }
    });
  }

  it('a builder circuit, the garbler being party 1, outputs to the evaluator only', async () => {
    const b = new circuits.CircuitBuilder();
    const x = b.input(0, 32);
    const y = b.input(1, 32);
    b.output(x.gt(y));
    b.output(x.add(y));
    const c = b.build();
    const { sessions, close } = await pair();
    try {
      const opts = { protocol: 'teleport-yao' as const, mode: 'malicious' as const, garbler: 1, enclave: enclaveFor(server), outputs: [[0], [0, 1]] };
      const [e, g] = await Promise.all([
        sessions[0].run(c, { ...opts, inputs: [unhex('00000100')] }),
        sessions[1].run(c, { ...opts, inputs: [unhex('000000ff')] }),
      ]);
      expect(e.map(hex)).toEqual(['01', '000001ff']);
      expect(g.map(hex)).toEqual([undefined, '000001ff']);
    } finally {
      await close();
    }
  });
});

describe('teleport-yao sessions', () => {
  it('one attested session per SDK session: one enclave program serves every run; the garbler sends O(input) bytes', async () => {
    const { sessions, close } = await pair();
    const enclave = enclaveFor(server);
    const c = circuitFile('aes_128.txt');
    const pids = () => new Set(server.sessions().map((x) => x.pid));
    const before = pids();
    let mine: number | undefined;
    try {
      const runOnce = () =>
        Promise.all(sessions.map((s, p) => s.run(c, { inputs: [new Uint8Array(16).fill(p)], protocol: 'teleport-yao', mode: 'semi-honest', enclave })));
      await runOnce();
      const fresh = [...pids()].filter((p) => !before.has(p));
      expect(fresh).toHaveLength(1);
      mine = fresh[0];
      const garblerBytes0 = sessions[0].bytesSent;
      for (let i = 0; i < 5; i++) await runOnce();
      expect([...pids()].filter((p) => !before.has(p))).toEqual([mine]);
      // Per AES run: the parameter record, the job header, the sealed seed and 256 labels —
      // within the "2 KB + 32 B per input bit" and far below the 200 KB of garbled tables.
      const perRun = (sessions[0].bytesSent - garblerBytes0) / 5;
      expect(perRun).toBeLessThan(2048 + 32 * 256);
      expect(perRun).toBeGreaterThan(16 * 256);
    } finally {
      c.free();
      await close();
    }
    // Closing the SDK session ends the attested session and its enclave program.
    for (let i = 0; i < 100 && pids().has(mine); i++) await new Promise((r) => setTimeout(r, 20));
    expect(pids().has(mine)).toBe(false);
  });

  it('refuses what it cannot do with INVALID_ARGUMENT before anything is sent', async () => {
    const c = circuitFile('adder64.txt');
    const enclave = enclaveFor(server);
    const inputs = [new Uint8Array(8)];
    const noUrl = { ...enclave, url: undefined };
    const cases: [number, object, RegExp][] = [
      [0, { enclave }, /needs mode/],
      [0, { enclave, mode: 'paranoid' }, /needs mode/],
      [0, { mode: 'malicious' }, /needs the enclave option/],
      [0, { mode: 'malicious', enclave: { ...enclave, policy: { measurements: [] } } }, /at least one pinned measurement/],
      [0, { mode: 'malicious', enclave: { ...enclave, policy: { simulatedMeasurements: ['00'] } } }, /32 bytes/],
      [0, { mode: 'malicious', enclave, outputs: [[0]] }, /cannot go to the garbler alone/],
      // The evaluator needs the URL (the garbler does not).
      [1, { mode: 'malicious', enclave: noUrl }, /enclave\.url/],
    ];
    try {
      for (const [party, opts, msg] of cases) {
        const { sessions, transports, close } = await pair();
        const sent: number[] = [];
        const other = transports[1 - party]!;
        const err = await sessions[party]!.run(c, { inputs, protocol: 'teleport-yao', ...opts } as never).catch((e) => e);
        expect(err, JSON.stringify(opts)).toBeInstanceOf(WebmpcError);
        expect(err.code).toBe('INVALID_ARGUMENT');
        expect(err.message).toMatch(msg);
        // Nothing reached the peer: its transport holds no message, only the closure.
        await other.recv(party, { timeoutMs: 200 }).then((m) => sent.push(m.length), () => {});
        expect(sent).toEqual([]);
        await close();
      }
    } finally {
      c.free();
    }
  });

  it('reports progress and stops on AbortSignal; the peer aborts too and the enclave session ends', async () => {
    const { sessions, close } = await pair();
    const c = circuitFile('sha256.txt');
    const enclave = enclaveFor(server);
    const before = server.sessions().length;
    const seen: { phase: string; gatesDone: number; gatesTotal: number }[] = [];
    try {
      const run = (p: number, extra: object) =>
        sessions[p]!.run(c, { inputs: [new Uint8Array(p === 0 ? 64 : 32)], protocol: 'teleport-yao', mode: 'semi-honest', enclave, ...extra });
      await Promise.all([run(0, {}), run(1, { onProgress: (q: (typeof seen)[0]) => seen.push(q) })]);
      expect(seen.some((q) => q.phase === 'setup')).toBe(true);
      const ev = seen.filter((q) => q.phase === 'evaluating');
      expect(ev.at(-1)!.gatesDone).toBe(c.gates);
      expect(ev.at(-1)!.gatesTotal).toBe(c.gates);
      expect(ev.length).toBeGreaterThan(1);

      const ac = new AbortController();
      const t0 = Date.now();
      const [g, e] = await both(
        run(0, {}),
        run(1, { signal: ac.signal, onProgress: (q: (typeof seen)[0]) => q.phase === 'evaluating' && q.gatesDone > 0 && ac.abort() }),
      );
      expect(e.status).toBe('rejected');
      expect((e as PromiseRejectedResult).reason.code).toBe('ABORTED');
      expect(g.status).toBe('rejected');
      expect((g as PromiseRejectedResult).reason).toBeInstanceOf(WebmpcError);
      expect(Date.now() - t0).toBeLessThan(10_000);
    } finally {
      c.free();
      await close();
    }
    for (let i = 0; i < 100 && server.sessions().length > before; i++) await new Promise((r) => setTimeout(r, 20));
    expect(server.sessions().length).toBe(before);
  });
});

describe('teleport-yao in the engine worker', () => {
  it('runs in the worker with the platform WebSocket; an app’s own WebSocket class keeps it on the caller’s thread, where that class is used', async () => {
    const server = await startServer();
    const c = circuitFile('aes_128.txt');
    let constructed = 0;
    class Own extends NodeWs {
      constructor(...args: ConstructorParameters<typeof NodeWs>) {
        super(...args);
        constructed++;
      }
    }
    try {
      const key = unhex('000102030405060708090a0b0c0d0e0f');
      const block = unhex('00112233445566778899aabbccddeeff');
      // A session each: an evaluator keeps to one WebSocket class within a session.
      for (const WebSocket of [undefined, Own]) {
        const { sessions, close } = await pair();
        const enclave = enclaveFor(server, WebSocket ? { WebSocket: WebSocket as never } : {});
        const outs = await Promise.all(
          sessions.map((s, p) => s.run(c, { inputs: [p === 0 ? key : block], protocol: 'teleport-yao', mode: 'malicious', enclave })),
        );
        await close();
        expect(outs.map((o) => hex(o[0]))).toEqual(['69c4e0d86a7b0430d8cdb78070b4c55a', '69c4e0d86a7b0430d8cdb78070b4c55a']);
        // The evaluator's link to the enclave-server used the app's class only in the second run.
        expect(constructed).toBe(WebSocket ? 1 : 0);
      }
    } finally {
      c.free();
      await server.close();
    }
  });
});
