// Parallel instances over sub-channels (`threads`): the parties settle on the smallest offer;
// MASCOT's and authgc's preprocessing shared out over 1, 2 and 4 threads gives the same outputs
// and stores the same counts; the instances' session ids differ from each other and from the
// primary's; a session that offers one thread, or runs on its own thread, splits nothing.
// Every registered protocol gives the same outputs with threads 1, 2 and 4: MASCOT on random
// programs (against the BigInt reference) as well as the fixed one; authgc, yao2pc, plain and
// teleport-yao on the reference AES-128 circuit (the last three have no parallel instances in
// `run`: the option is accepted and nothing is split; yao2pc's `runMany` splits its runs, tested
// in run-many.test.ts). Closing sessions with 4 threads ends every worker's
// OS thread (Node on Linux).
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryTransports, init, prepareCircuit, session, type Progress, type Session } from '../../dist/index.js';
import * as workerHost from '../../dist/engine/worker-host.js';
import { aes128Circuit, CircuitBuilder } from '../../dist/circuit/index.js';
import { ProgramBuilder } from '../../dist/program/index.js';
import { protocols } from '../../dist/protocols/index.js';
import { referenceCircuit } from '../helpers.js';
import { randomProgram } from '../mascot/generate.js';
import { decode, evaluate } from '../mascot/reference.js';
import { enclaveFor, startServer } from '../teleport/helpers.js';
import { hex, rejection, unhex } from './helpers.js';

const liveWorkers = (workerHost as unknown as { _liveEngineWorkers(): number })._liveEngineWorkers;

beforeAll(async () => {
  await init();
});

/** The registered protocols with no parallel instances (no `instanceTasks`). */
const WITHOUT_INSTANCES = ['yao2pc', 'plain', 'teleport-yao'] as const;

async function sessions(parties: number, threads: number[] | number, worker = true): Promise<{ s: Session[]; close(): Promise<void> }> {
  const ts = createMemoryTransports(parties, { recvTimeoutMs: 60_000 });
  const offer = (p: number) => (Array.isArray(threads) ? threads[p]! : threads);
  const s = await Promise.all(ts.map((transport, party) => session({ transport, party, parties, worker, threads: offer(party) })));
  return { s, close: async () => void (await Promise.all(s.map((x) => x.close()))) };
}

async function program() {
  const b = new ProgramBuilder({ parties: 3 });
  const [x, y, z] = [b.uint(0, 32), b.uint(1, 32), b.uint(2, 32)];
  b.output(x.mul(y).add(z));
  b.output(x.lt(y), { to: [0] });
  b.output(x.max(z));
  return b.build();
}

describe('parallel instances (threads)', () => {
  it('MASCOT with 1, 2 and 4 threads: the same outputs, the same store, the instances each in a worker', async () => {
    const p = await program();
    const results: string[] = [];
    for (const threads of [1, 2, 4]) {
      const before = liveWorkers();
      const n = await sessions(3, threads);
      const seen: Progress[] = [];
      await Promise.all(n.s.map((s, i) => s.preprocess('mascot', { triples: 600, bits: 200, ...(i === 0 ? { onProgress: (x: Progress) => void seen.push(x) } : {}) })));
      // Every party and every thread: the primary and threads − 1 instances.
      expect(liveWorkers() - before).toBe(3 * threads);
      const outs = await Promise.all(n.s.map((s, i) => s.run(p, { protocol: 'mascot', inputs: p.encodeInputs(i, [[70_000, 90_000, 123][i]!]) })));
      results.push(JSON.stringify(outs.map((o) => p.decodeOutputs(o).map(String))));
      // Progress adds up over the instances: the last report of each phase is complete.
      for (const phase of ['triples', 'bits']) {
        const last = seen.filter((x) => x.phase === phase).at(-1);
        expect(last, phase).toBeDefined();
        expect(last!.done, phase).toBe(last!.total);
      }
      await n.close();
      expect(liveWorkers()).toBe(before);
    }
    expect(results[0]).toBe(JSON.stringify([['6300000123', '1', '70000'], ['6300000123', 'undefined', '70000'], ['6300000123', 'undefined', '70000']]));
    expect(results[1]).toBe(results[0]);
    expect(results[2]).toBe(results[0]);
  }, 240_000);

  it('authgc with 1, 2 and 4 threads: the same outputs, the same pools, the instances each in a worker', async () => {
    const hex = (b: Uint8Array | undefined) => (b ? Buffer.from(b).toString('hex') : 'undefined');
    const unhex = (h: string) => Uint8Array.from(Buffer.from(h, 'hex'));
    const aes = aes128Circuit();
    const b = new CircuitBuilder();
    const [x, y, z] = [b.input(0, 32), b.input(1, 32), b.input(2, 32)];
    b.output(x.mul(y).add(z));
    b.output(x.gt(z).toUInt()); // to party 0 only (the run's outputs option)
    const three = b.build();
    const be = (v: number) => Uint8Array.of(v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255);
    const values = [be(70_000), be(90_000), be(123)];
    const INDEPENDENT = 'function-independent preprocessing';
    const results: string[] = [];
    for (const threads of [1, 2, 4]) {
      // AES-128, 2 parties, run alone: what the run needs is made before it, shared out.
      let before = liveWorkers();
      let n = await sessions(2, threads);
      const key = unhex('000102030405060708090a0b0c0d0e0f');
      const pt = unhex('00112233445566778899aabbccddeeff');
      const ct = await Promise.all(n.s.map((s, p) => s.run(aes, { protocol: 'authgc', inputs: [p === 0 ? key : pt] })));
      expect(liveWorkers() - before).toBe(2 * threads);
      for (const out of ct) expect(hex(out[0])).toBe('69c4e0d86a7b0430d8cdb78070b4c55a');
      await n.close();
      expect(liveWorkers()).toBe(before);

      // Three parties: preprocessing big enough to split four ways, with progress, then a run
      // on the pools; every thread's instance in a worker of its own.
      before = liveWorkers();
      n = await sessions(3, threads);
      const seen: Progress[] = [];
      await Promise.all(
        n.s.map((s, i) => s.preprocess('authgc', { andGates: 14_000, masks: 14_500, ...(i === 0 ? { onProgress: (p: Progress) => void seen.push(p) } : {}) })),
      );
      expect(liveWorkers() - before).toBe(3 * threads);
      const last = seen.filter((p) => p.phase === INDEPENDENT).at(-1);
      expect(last).toBeDefined();
      expect(last!.done).toBe(last!.total);
      expect(last!.total).toBe(14_000 + 14_500);
      const outs = await Promise.all(n.s.map((s, i) => s.run(three, { protocol: 'authgc', evaluator: 2, outputs: [[0, 1, 2], [0]], inputs: [values[i]!] })));
      results.push(JSON.stringify(outs.map((o) => o.map(hex))));
      await n.close();
      expect(liveWorkers()).toBe(before);
    }
    const want = [hex(be((70_000 * 90_000 + 123) >>> 0)), hex(Uint8Array.of(1))];
    expect(results[0]).toBe(JSON.stringify([want, [want[0], 'undefined'], [want[0], 'undefined']]));
    expect(results[1]).toBe(results[0]);
    expect(results[2]).toBe(results[0]);
  }, 300_000);

  it('settles on the smallest offer; an in-thread party offers one, so nothing is split', async () => {
    for (const [offers, worker, want] of [
      [[4, 2, 3], true, 2],
      [[4, 4, 4], [true, true, false], 1],
    ] as const) {
      const ts = createMemoryTransports(3, { recvTimeoutMs: 60_000 });
      const s = await Promise.all(
        ts.map((transport, party) =>
          session({ transport, party, parties: 3, threads: offers[party]!, worker: Array.isArray(worker) ? worker[party]! : worker }),
        ),
      );
      await Promise.all(s.map((x) => x.ready()));
      const before = liveWorkers();
      await Promise.all(s.map((x) => x.preprocess('mascot', { triples: 64 })));
      // Instance workers started: want − 1 per party that runs in a worker.
      const inWorker = s.filter((x) => x.inWorker).length;
      expect(liveWorkers() - before).toBe(inWorker * (want - 1));
      await Promise.all(s.map((x) => x.close()));
    }
  }, 120_000);

  it('MASCOT on random programs with 1, 2 and 4 threads: every party gets the BigInt reference outputs', async () => {
    // Small programs (a few hundred triples at most), so the run's own preprocessing, shared out
    // over the instances, is what makes their triples and bits.
    for (const [seed, field] of [[7, 'prime'], [8, 'binary']] as const) {
      const { program, values } = await randomProgram(seed, 2, field, 150);
      const want = evaluate(decode(program.bytes), values);
      for (const threads of [1, 2, 4]) {
        const before = liveWorkers();
        const n = await sessions(2, threads);
        try {
          const outs = await Promise.all(
            n.s.map((s, party) => s.run(program, { protocol: 'mascot', inputs: program.encodeInputs(party, program.inputsOf(party).map((i) => values[i]!)) })),
          );
          expect(liveWorkers() - before, `seed ${seed}`).toBe(2 * threads);
          for (const [party, out] of outs.entries()) {
            const mine = want.map((v, i) => (program.outputs[i]!.includes(party) ? v : undefined));
            expect(program.decodeOutputs(out), `seed ${seed} (${field}), threads ${threads}, party ${party}`).toEqual(mine);
          }
        } finally {
          await n.close();
        }
      }
    }
  }, 240_000);

  describe('protocols without parallel instances: threads accepted, the same outputs, nothing split', () => {
    let server: Awaited<ReturnType<typeof startServer>>;
    beforeAll(async () => {
      server = await startServer();
    });
    afterAll(async () => {
      await server?.close();
    });

    it('every registered protocol is covered here or above; only MASCOT and authgc split their work', () => {
      // A protocol added to the registry, or one that gains instance tasks, needs its own case.
      const covered = ['mascot', 'authgc', ...WITHOUT_INSTANCES];
      expect(Object.keys(protocols).sort()).toEqual([...covered].sort());
      const splitting = Object.entries(protocols).filter(([, m]) => 'instanceTasks' in m && m.instanceTasks).map(([k]) => k);
      expect(splitting.sort()).toEqual(['authgc', 'mascot']);
    });

    for (const protocol of WITHOUT_INSTANCES) {
      it(`${protocol}: AES-128 (reference circuit) with 1, 2 and 4 threads gives the FIPS-197 answer, with no instance worker`, async () => {
        const aes = prepareCircuit(referenceCircuit('aes_128.txt'));
        const key = unhex('000102030405060708090a0b0c0d0e0f');
        const pt = unhex('00112233445566778899aabbccddeeff');
        const extra = protocol === 'teleport-yao' ? { mode: 'semi-honest' as const, enclave: enclaveFor(server) } : {};
        try {
          for (const threads of [1, 2, 4]) {
            const before = liveWorkers();
            const n = await sessions(2, threads);
            try {
              const outs = await Promise.all(n.s.map((s, p) => s.run(aes, { protocol, inputs: [p === 0 ? key : pt], ...extra })));
              for (const [p, out] of outs.entries()) expect(hex(out[0]), `threads ${threads}, party ${p}`).toBe('69c4e0d86a7b0430d8cdb78070b4c55a');
              // The two parties' engine workers, started with their sessions: nothing else.
              expect(liveWorkers() - before, `threads ${threads}`).toBe(2);
            } finally {
              await n.close();
            }
          }
        } finally {
          aes.free();
        }
      }, 120_000);
    }
  });

  // Linux: the process's OS threads, from /proc (each engine worker is a thread of its own).
  const osThreads = () => Number(/^Threads:\s+(\d+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]);
  it.runIf(existsSync('/proc/self/status'))('closing sessions with 4 threads leaves no worker behind: the OS threads are back to what they were', async () => {
    const cycle = async () => {
      const before = liveWorkers();
      const n = await sessions(2, 4);
      await Promise.all(n.s.map((s) => s.preprocess('mascot', { triples: 64 })));
      // The primaries and three instances per party.
      expect(liveWorkers() - before).toBe(8);
      const during = osThreads();
      await n.close();
      expect(liveWorkers()).toBe(before);
      return during;
    };
    // A first cycle starts whatever stays for the process's life (libuv's pool, V8's threads);
    // then the count settles (ended workers' threads are joined within a few hundred ms).
    await cycle();
    let base = osThreads();
    for (let same = 0; same < 3; ) {
      await new Promise((r) => setTimeout(r, 150));
      const now = osThreads();
      same = now === base ? same + 1 : 0;
      base = now;
    }
    const during = await cycle();
    expect(during - base).toBeGreaterThanOrEqual(8);
    // close() has awaited every worker's termination; the threads may take a moment to be joined.
    const deadline = Date.now() + 5_000;
    while (osThreads() > base && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(osThreads()).toBeLessThanOrEqual(base);
  }, 120_000);

  it('refuses a threads option that is not a whole number from 1 to 64', async () => {
    for (const threads of [0, 1.5, 65, Number.NaN]) {
      const [t] = createMemoryTransports(2);
      const r = await rejection(session({ transport: t!, party: 0, parties: 2, sessionId: new Uint8Array(32), threads }));
      expect(r.error, String(threads)).toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
  });
});
