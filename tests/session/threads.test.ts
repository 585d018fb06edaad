// Parallel instances over sub-channels (`threads`): the parties settle on the smallest offer;
// MASCOT's preprocessing shared out over 1, 2 and 4 threads gives the same outputs and stores the
// same counts; the instances' session ids differ from each other and from the primary's; a
// session that offers one thread, or runs on its own thread, splits nothing.
import { beforeAll, describe, expect, it } from 'vitest';
import { createMemoryTransports, init, session, type Progress, type Session } from '../../dist/index.js';
import * as workerHost from '../../dist/engine/worker-host.js';
import { ProgramBuilder } from '../../dist/program/index.js';
import { rejection } from './helpers.js';

const liveWorkers = (workerHost as unknown as { _liveEngineWorkers(): number })._liveEngineWorkers;

beforeAll(async () => {
  await init();
});

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

  it('refuses a threads option that is not a whole number from 1 to 64', async () => {
    for (const threads of [0, 1.5, 65, Number.NaN]) {
      const [t] = createMemoryTransports(2);
      const r = await rejection(session({ transport: t!, party: 0, parties: 2, sessionId: new Uint8Array(32), threads }));
      expect(r.error, String(threads)).toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
  });
});
