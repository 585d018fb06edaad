// Session.runMany: many independent runs of one circuit in one call. AES-128 (the reference
// circuit) with a key and plaintext varied per run, against node:crypto's AES for every run, with
// 1, 2 and 4 threads in engine workers and on the caller's thread: the outputs in run order; with
// k threads yao2pc runs k chunks, each in a worker of its own under a session id of its own (the
// same at both parties, different from each other's and from the primary's); the setups are
// kept for the next call; a different run count (or run against runMany) is PARAMETER_MISMATCH
// at both parties; bad arguments are INVALID_ARGUMENT before anything is sent; a peer's worker
// dying mid-call fails both parties' calls at once, with no worker left behind; plain runs its
// runs one after another; teleport-yao runs its chunks in instances as yao2pc does, each with an
// enclave session of its own.
import { createCipheriv, createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createMemoryTransports, init, prepareCircuit, session, TransportError, WebmpcError, type Progress, type Session } from '../../dist/index.js';
import * as workerHost from '../../dist/engine/worker-host.js';
import { referenceCircuit } from '../helpers.js';
import { enclaveFor, startServer } from '../teleport/helpers.js';
import { hex, rejection, unhex } from './helpers.js';

const liveWorkers = (workerHost as unknown as { _liveEngineWorkers(): number })._liveEngineWorkers;
const engineOf = (s: Session) => (s as unknown as { _engine: Promise<{ _kill(): Promise<void> }> | undefined })._engine;
const instanceIds = (s: Session) => (s as unknown as { _runManyInstanceIds: readonly Uint8Array[] })._runManyInstanceIds;

const KEY = '000102030405060708090a0b0c0d0e0f';
const PT = '00112233445566778899aabbccddeeff';

/** Run r's key and plaintext: FIPS-197's, with a byte of each changed by r (run 0 is FIPS-197's). */
function runInputs(runs: number): { keys: Uint8Array[]; pts: Uint8Array[] } {
  const keys = Array.from({ length: runs }, (_, r) => Object.assign(unhex(KEY), { [r % 16]: (r * 37) & 255 }));
  const pts = Array.from({ length: runs }, (_, r) => Object.assign(unhex(PT), { [15 - (r % 16)]: (r * 91 + 5) & 255 }));
  keys[0] = unhex(KEY);
  pts[0] = unhex(PT);
  return { keys, pts };
}

function aes(key: Uint8Array, pt: Uint8Array): string {
  const c = createCipheriv('aes-128-ecb', key, null).setAutoPadding(false);
  return Buffer.concat([c.update(pt), c.final()]).toString('hex');
}

async function sessions(threads: number, worker: boolean, recvTimeoutMs = 60_000): Promise<{ s: Session[]; close(): Promise<void> }> {
  const ts = createMemoryTransports(2, { recvTimeoutMs });
  const s = await Promise.all(ts.map((transport, party) => session({ transport, party, parties: 2, worker, threads })));
  await Promise.all(s.map((x) => x.ready()));
  return { s, close: async () => void (await Promise.all(s.map((x) => x.close().catch(() => {})))) };
}

let circuit: ReturnType<typeof prepareCircuit>;
beforeAll(async () => {
  await init();
  circuit = prepareCircuit(referenceCircuit('aes_128.txt'));
});

describe('Session.runMany', () => {
  it('yao2pc AES-128, 6 runs, threads 1, 2, 4 in workers and in-thread: every run is node:crypto AES, in run order', async () => {
    const RUNS = 6;
    const { keys, pts } = runInputs(RUNS);
    const want = keys.map((k, r) => aes(k, pts[r]!));
    expect(want[0]).toBe('69c4e0d86a7b0430d8cdb78070b4c55a');
    expect(new Set(want).size).toBe(RUNS);
    for (const [threads, worker] of [[1, true], [2, true], [4, true], [4, false]] as const) {
      const label = `threads ${threads}${worker ? '' : ', in-thread'}`;
      const before = liveWorkers();
      const n = await sessions(threads, worker);
      try {
        const seen: Progress[] = [];
        const outs = await Promise.all(
          n.s.map((s, p) => s.runMany(circuit, { inputs: p === 0 ? keys.map((k) => [k]) : pts.map((x) => [x]), ...(p === 0 ? { onProgress: (x: Progress) => void seen.push(x) } : {}) })),
        );
        for (const [p, out] of outs.entries()) {
          expect(out.map((o) => hex(o[0])), `${label}, party ${p}`).toEqual(want);
        }
        // The primary and an instance per further thread, each with a worker of its own.
        expect(liveWorkers() - before, label).toBe(worker ? 2 * threads : 0);
        // Progress adds up over the chunks: the last evaluating report is all the runs' gates.
        const last = seen.filter((x) => x.phase === 'evaluating').at(-1)!;
        expect(last.done, label).toBe(last.total);
        expect(last.gatesTotal, label).toBe(RUNS * circuit.gates);
        const ids = n.s.map(instanceIds);
        if (worker && threads > 1) {
          // The same ids at both parties; different from each other and from the primary's.
          const primary = createHash('sha256').update('webmpc/protocol/yao2pc/v1').update(n.s[0]!.sessionId).digest('hex');
          expect(ids[0]!.map(hex)).toEqual(ids[1]!.map(hex));
          expect(new Set([primary, ...ids[0]!.map(hex)]).size, label).toBe(threads);
          // A second call reuses every instance's setup: no setup phase, the same answers.
          const phases = new Set<string>();
          const again = await Promise.all(
            n.s.map((s, p) => s.runMany(circuit, { inputs: p === 0 ? keys.map((k) => [k]) : pts.map((x) => [x]), onProgress: (x: Progress) => void phases.add(x.phase) })),
          );
          expect(again[0]!.map((o) => hex(o[0]))).toEqual(want);
          expect([...phases]).not.toContain('setup');
        } else {
          expect(ids[0]).toEqual([]);
        }
      } finally {
        await n.close();
      }
      expect(liveWorkers(), label).toBe(before);
    }
  }, 240_000);

  it('more threads than runs: one chunk per run; plain runs its runs one after another, with no instance worker', async () => {
    const { keys, pts } = runInputs(2);
    const before = liveWorkers();
    const n = await sessions(4, true);
    try {
      for (const protocol of ['yao2pc', 'plain'] as const) {
        const outs = await Promise.all(n.s.map((s, p) => s.runMany(circuit, { protocol, inputs: p === 0 ? keys.map((k) => [k]) : pts.map((x) => [x]) })));
        for (const out of outs) expect(out.map((o) => hex(o[0])), protocol).toEqual([aes(keys[0]!, pts[0]!), aes(keys[1]!, pts[1]!)]);
        // yao2pc: 2 runs, 2 chunks, one instance worker per party (plain adds none).
        expect(liveWorkers() - before, protocol).toBe(4);
      }
    } finally {
      await n.close();
    }
    expect(liveWorkers()).toBe(before);
  }, 120_000);

  it('teleport-yao with threads: one chunk of runs per instance worker, each with its own enclave session and session id, at most 4', async () => {
    const server = await startServer();
    const { keys, pts } = runInputs(6);
    const before = liveWorkers();
    const n = await sessions(8, true);
    try {
      const enclave = enclaveFor(server);
      const call = () =>
        Promise.all(
          n.s.map((s, p) => s.runMany(circuit, { protocol: 'teleport-yao', mode: 'semi-honest', enclave, inputs: p === 0 ? keys.map((k) => [k]) : pts.map((x) => [x]) })),
        );
      const outs = await call();
      for (const out of outs) expect(out.map((o) => hex(o[0]))).toEqual(keys.map((k, r) => aes(k, pts[r]!)));
      // 6 runs, 8 threads, but at most 4 instances (the enclave-server's default sessions per
      // client): 4 chunks, the primary and three instances, a worker each at each party.
      expect(liveWorkers() - before).toBe(8);
      // Each chunk's evaluator opened an enclave session of its own (the attestation and the
      // sealing key are per instance).
      const started = () => server.lines.filter((l) => / started simulation enclave program/.test(l)).length;
      expect(started()).toBe(4);
      const ids = n.s.map(instanceIds);
      const primary = createHash('sha256').update('webmpc/protocol/teleport-yao/v1').update(n.s[0]!.sessionId).digest('hex');
      expect(ids[0]!.map(hex)).toEqual(ids[1]!.map(hex));
      expect(new Set([primary, ...ids[0]!.map(hex)]).size).toBe(4);
      // A second call keeps every instance's attested session: no new enclave session.
      const again = await call();
      expect(again[1]!.map((o) => hex(o[0]))).toEqual(keys.map((k, r) => aes(k, pts[r]!)));
      expect(started()).toBe(4);
    } finally {
      await n.close();
      await server.close();
    }
    expect(liveWorkers()).toBe(before);
  }, 120_000);

  it("teleport-yao against a server that grants fewer sessions: both parties' calls fail naming the server's refusal, no worker left", async () => {
    const server = await startServer({ maxSessionsPerClient: 2 });
    const { keys, pts } = runInputs(4);
    const before = liveWorkers();
    const n = await sessions(4, true);
    try {
      const enclave = enclaveFor(server);
      const errors = await Promise.all(
        n.s.map(async (s, p) => (await rejection(s.runMany(circuit, { protocol: 'teleport-yao', mode: 'semi-honest', enclave, inputs: p === 0 ? keys.map((k) => [k]) : pts.map((x) => [x]) }))).error as WebmpcError),
      );
      // 4 instances ask for 4 sessions; the server refuses two of them (1013, after an Error
      // frame saying why). Whether the evaluator was sending or reading when it came, its error
      // carries the server's reason, and the garbler learns it in the evaluator's abort.
      for (const e of errors) expect(e.message).toMatch(/ENCLAVE_BUSY: this client already has its maximum of 2 sessions/);
      expect(errors[1]!.code).toMatch(/^ENCLAVE_(UNAVAILABLE|FAILED)$/);
    } finally {
      await n.close();
      await server.close();
    }
    expect(liveWorkers()).toBe(before);
  }, 120_000);

  it('a different run count, or run against runMany, is PARAMETER_MISMATCH at both parties; the session stays usable', async () => {
    const { keys, pts } = runInputs(4);
    const n = await sessions(2, true);
    try {
      const counts = await Promise.all([
        rejection(n.s[0]!.runMany(circuit, { inputs: keys.slice(0, 3).map((k) => [k]) })),
        rejection(n.s[1]!.runMany(circuit, { inputs: pts.map((x) => [x]) })),
      ]);
      for (const r of counts) {
        expect(r.error).toMatchObject({ code: 'PARAMETER_MISMATCH' });
        expect(r.error.message).toMatch(/runs/);
      }
      const ops = await Promise.all([
        rejection(n.s[0]!.run(circuit, { inputs: [keys[0]!] })),
        rejection(n.s[1]!.runMany(circuit, { inputs: [[pts[0]!]] })),
      ]);
      for (const r of ops) {
        expect(r.error).toMatchObject({ code: 'PARAMETER_MISMATCH' });
        expect(r.error.message).toMatch(/operation/);
      }
      const outs = await Promise.all(n.s.map((s, p) => s.runMany(circuit, { inputs: [[p === 0 ? keys[1]! : pts[1]!]] })));
      expect(hex(outs[1]![0]![0])).toBe(aes(keys[1]!, pts[1]!));
    } finally {
      await n.close();
    }
  }, 120_000);

  it('bad arguments are INVALID_ARGUMENT before anything is sent, naming the run', async () => {
    const key = unhex(KEY);
    const streamed = { hash: circuit.hash, prefix: new Uint8Array(0), owners: undefined, pieces: () => [] } as never;
    const cases: [string, () => unknown, RegExp][] = [
      ['no runs', () => [], /1 to 4096 runs/],
      ['too many runs', () => Array.from({ length: 4097 }, () => [key]), /1 to 4096 runs/],
      ['not an array', () => key, /1 to 4096 runs/],
      ['a run of the wrong width', () => [[key], [key], [key.subarray(1)]], /^run 2: .*needs 16 bytes, not 15/],
      ['a run with two values', () => [[key], [key, key]], /^run 1: party 0 owns 1 input value/],
    ];
    for (const [what, inputs, message] of cases) {
      const [t, peer] = createMemoryTransports(2);
      const s = await session({ transport: t!, party: 0, parties: 2, sessionId: new Uint8Array(32), worker: false });
      const r = await rejection(s.runMany(circuit, { inputs: inputs() as Uint8Array[][] }));
      expect(r.error, what).toBeInstanceOf(WebmpcError);
      expect(r.error, what).toMatchObject({ code: 'INVALID_ARGUMENT' });
      expect(r.error.message, what).toMatch(message);
      // Nothing reached the peer before the refusal (the session then closed the transport).
      expect(await rejection(peer!.recv(0, { timeoutMs: 1_000 })).then((x) => x.error), what).toBeInstanceOf(TransportError);
      await s.close();
    }
    const [t] = createMemoryTransports(2);
    const s = await session({ transport: t!, party: 0, parties: 2, sessionId: new Uint8Array(32), worker: false });
    const r = await rejection(s.runMany(streamed, { inputs: [[key]] }));
    expect(r.error).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(r.error.message).toMatch(/StreamedCircuit/);
    await s.close();
  });

  it("a peer's worker dying mid-call fails both parties' calls at once (not by timeout), leaving no worker", async () => {
    const RUNS = 16;
    const { keys, pts } = runInputs(RUNS);
    const before = liveWorkers();
    const n = await sessions(2, true, 30_000);
    let killedAt = 0;
    const kill = (p: Progress) => {
      if (killedAt || p.phase !== 'evaluating' || p.done === 0) return;
      killedAt = Date.now();
      void engineOf(n.s[1]!)!.then((e) => e._kill());
    };
    const results = await Promise.all(
      n.s.map((s, p) => rejection(s.runMany(circuit, { inputs: p === 0 ? keys.map((k) => [k]) : pts.map((x) => [x]), ...(p === 1 ? { onProgress: kill } : {}) }))),
    );
    expect(killedAt).toBeGreaterThan(0);
    expect(results[1]!.error).toMatchObject({ code: 'WORKER_FAILED' });
    expect(results[0]!.error).toBeInstanceOf(TransportError);
    expect(results[0]!.error).toMatchObject({ code: 'PEER_DISCONNECTED', peer: 1 });
    // Well under the 30 s receive timeout it would otherwise wait out (a bound on the mechanism,
    // not on speed: a loaded machine may take seconds).
    for (const r of results) expect(r.at - killedAt).toBeLessThan(15_000);
    await n.close();
    expect(liveWorkers()).toBe(before);
  }, 120_000);
});
