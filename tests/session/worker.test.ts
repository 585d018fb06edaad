// Sessions in their engine workers (the default) against sessions on the caller's thread: the
// same outputs for every protocol that runs in a worker; the worker started with the session,
// ended by close() and free(), none left behind; protocol state kept in the worker across runs;
// a worker that dies mid-run fails the run with WORKER_FAILED and its peers abort at once.
import { beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMemoryTransports, init, prepareCircuit, prestartWorker, session, TransportError, WebmpcError, type Progress, type Session } from '../../dist/index.js';
import { CircuitBuilder } from '../../dist/circuit/index.js';
import * as workerHost from '../../dist/engine/worker-host.js';
import { compiledModule } from '../../dist/engine/wasm.js';
import * as relayModule from '../../dist/engine/relay.js';
import { ProgramBuilder } from '../../dist/program/index.js';
import { referenceCircuit } from '../helpers.js';
import { hex, rejection, unhex } from './helpers.js';

const aes = referenceCircuit('aes_128.txt');

// Internal hooks (left out of the published declarations): live workers, and a session's worker.
const _liveEngineWorkers = (workerHost as unknown as { _liveEngineWorkers(): number })._liveEngineWorkers;
type RelayStats = { messages: number; slices: number; deferred: number; maxSliceMessages: number; maxSliceBytes: number; maxMessageBytes: number };
const { RELAY_SLICE, _relayStats } = relayModule as unknown as { RELAY_SLICE: { messages: number; bytes: number }; _relayStats(reset?: boolean): RelayStats };
const engineOf = (s: Session) => (s as unknown as { _engine: Promise<{ _kill(): Promise<void> }> | undefined })._engine;

beforeAll(async () => {
  await init();
});

async function sessions(parties: number, worker: boolean): Promise<{ s: Session[]; close(): Promise<void> }> {
  const ts = createMemoryTransports(parties, { recvTimeoutMs: 30_000 });
  const s = await Promise.all(ts.map((transport, party) => session({ transport, party, parties, worker })));
  return { s, close: async () => void (await Promise.all(s.map((x) => x.close()))) };
}

/** max, a < b and the sum of three 16-bit inputs, to different recipients. */
function threeParty() {
  const b = new CircuitBuilder();
  const [x, y, z] = [b.input(0, 16), b.input(1, 16), b.input(2, 16)];
  b.output(x.max(y).max(z));
  b.output(x.lt(y).toUInt());
  b.output(x.add(y).add(z));
  return b.build();
}

describe('the engine worker', () => {
  it('every protocol that runs in a worker gives the outputs it gives on the caller’s thread', async () => {
    const key = unhex('000102030405060708090a0b0c0d0e0f');
    const block = unhex('00112233445566778899aabbccddeeff');
    const three = threeParty();
    const inputs3 = [unhex('1234'), unhex('0fff'), unhex('8001')];
    const outputs3 = [[0], [1, 2], [0, 1, 2]];
    const program = await (async () => {
      const b = new ProgramBuilder({ parties: 3 });
      const [x, y, z] = [b.uint(0, 32), b.uint(1, 32), b.uint(2, 32)];
      b.output(x.add(y).add(z));
      b.output(x.mul(y).add(z), { to: [1] });
      b.output(x.lt(z));
      return b.build();
    })();
    const got: Record<string, string[][]> = {};
    for (const worker of [true, false]) {
      const two = await sessions(2, worker);
      for (const protocol of ['yao2pc', 'authgc', 'plain'] as const) {
        const outs = await Promise.all(two.s.map((s, p) => s.run(aes, { inputs: [p === 0 ? key : block], protocol })));
        (got[`${protocol} AES-128`] ??= []).push(outs.flat().map((o) => hex(o) ?? '-'));
      }
      expect(two.s.every((s) => s.inWorker === worker)).toBe(true);
      await two.close();
      const n3 = await sessions(3, worker);
      for (const protocol of ['authgc', 'plain'] as const) {
        const outs = await Promise.all(n3.s.map((s, p) => s.run(three, { inputs: [inputs3[p]!], outputs: outputs3, protocol })));
        (got[`${protocol} 3 parties`] ??= []).push(outs.flat().map((o) => hex(o) ?? '-'));
      }
      const m = await Promise.all(
        n3.s.map((s, p) => s.run(program, { protocol: 'mascot', inputs: program.encodeInputs(p, [[1000, 70_000, 999][p]!]) })),
      );
      (got['mascot'] ??= []).push(m.map((o) => program.decodeOutputs(o).map(String).join(',')));
      await n3.close();
    }
    for (const [what, [inWorker, inThread]] of Object.entries(got)) expect(inWorker, what).toEqual(inThread);
    expect(got['yao2pc AES-128']![0]).toContain('69c4e0d86a7b0430d8cdb78070b4c55a');
    expect(got['authgc 3 parties']![0]).toEqual(['8001', '-', 'a234', '-', '00', 'a234', '-', '00', 'a234']);
    expect(got['mascot']![0]).toEqual(['71999,undefined,0', '71999,70000999,0', '71999,undefined,0']);
  }, 120_000);

  it('a builder circuit encoded by the worker (from its gate arrays) is the one the caller’s thread encodes', async () => {
    // One party in a worker, one on its own thread: the run only starts if both hold the same
    // binary form (the parties compare its hash), and its outputs are the builder's semantics.
    const b = new CircuitBuilder();
    const [x, y] = [b.input(0, 32), b.input(1, 32)];
    b.output(x.mul(y).add(x.max(y)));
    b.output(x.xor(1234).lt(y).toUInt());
    const c = b.build();
    const ts = createMemoryTransports(2, { recvTimeoutMs: 30_000 });
    const s = await Promise.all(ts.map((transport, party) => session({ transport, party, parties: 2, worker: party === 0 })));
    expect(s.map((x) => x.inWorker)).toEqual([true, false]);
    const [xv, yv] = [0x9e3779b9, 0x7f4a7c15];
    // Values cross the session API big-endian.
    const be32 = (v: number) => {
      const b = new Uint8Array(4);
      new DataView(b.buffer).setUint32(0, v, false);
      return b;
    };
    const inputs = [be32(xv), be32(yv)];
    const outs = await Promise.all(s.map((x, p) => x.run(c, { inputs: [inputs[p]!], protocol: 'yao2pc' })));
    const word = (o: Uint8Array | undefined) => new DataView(o!.buffer, o!.byteOffset).getUint32(0, false);
    for (const o of outs) {
      expect(word(o[0])).toBe(Number((BigInt(xv) * BigInt(yv) + BigInt(Math.max(xv, yv))) % 2n ** 32n));
      expect(o[1]![0]).toBe(((xv ^ 1234) >>> 0) < yv ? 1 : 0);
    }
    await Promise.all(s.map((x) => x.close()));
  }, 60_000);

  it('starts with the session, is ended by close() and by free(), and none is left behind', async () => {
    const before = _liveEngineWorkers();
    const two = await sessions(2, true);
    await Promise.all(two.s.map((s) => s.ready()));
    expect(_liveEngineWorkers()).toBe(before + 2);
    // free() ends the worker with the state in it; the next operation starts another.
    const c = prepareCircuit(aes);
    await Promise.all(two.s.map((s, p) => s.run(c, { inputs: [new Uint8Array(16).fill(p)] })));
    two.s.forEach((s) => s.free());
    await new Promise((r) => setTimeout(r, 100));
    expect(_liveEngineWorkers()).toBe(before);
    await Promise.all(two.s.map((s, p) => s.run(c, { inputs: [new Uint8Array(16).fill(p)] })));
    expect(_liveEngineWorkers()).toBe(before + 2);
    await two.close();
    expect(_liveEngineWorkers()).toBe(before);
    c.free();
    // In-thread sessions start none.
    const local = await sessions(2, false);
    await Promise.all(local.s.map((s) => s.ready()));
    expect(_liveEngineWorkers()).toBe(before);
    await local.close();
  });

  it('a prestarted worker (prestartWorker) is the one the next session takes; an unused one is ended by discard', async () => {
    const host = workerHost as unknown as {
      prestartEngineWorker(main: WebAssembly.Module): void;
      discardSpareEngineWorker(): Promise<void>;
    };
    const main = compiledModule('main')!;
    const before = _liveEngineWorkers();
    prestartWorker();
    prestartWorker(); // a second call while one waits starts none
    await expect.poll(() => _liveEngineWorkers(), { timeout: 30_000 }).toBe(before + 1);
    const two = await sessions(2, true);
    await Promise.all(two.s.map((s) => s.ready()));
    // One session took the spare, the other started its own: two workers, not three.
    expect(_liveEngineWorkers()).toBe(before + 2);
    const c = prepareCircuit(aes);
    const outs = await Promise.all(two.s.map((s, p) => s.run(c, { inputs: [p === 0 ? unhex('000102030405060708090a0b0c0d0e0f') : unhex('00112233445566778899aabbccddeeff')] })));
    expect(hex(outs[0]![0])).toBe('69c4e0d86a7b0430d8cdb78070b4c55a');
    await two.close();
    c.free();
    expect(_liveEngineWorkers()).toBe(before);
    await host.discardSpareEngineWorker(); // none left: nothing to do
    host.prestartEngineWorker(main);
    await expect.poll(() => _liveEngineWorkers(), { timeout: 30_000 }).toBe(before + 1);
    await host.discardSpareEngineWorker();
    expect(_liveEngineWorkers()).toBe(before);
  }, 60_000);

  it('prestartWorker: NOT_INITIALIZED before init(); after it, a worker no session takes lets Node exit', () => {
    const index = pathToFileURL(join(import.meta.dirname, '../../dist/index.js')).href;
    const script = `
      const m = await import(${JSON.stringify(index)});
      try { m.prestartWorker(); console.log('started before init'); } catch (e) { console.log(e.code); }
      await m.init();
      m.prestartWorker();
      // Long enough for the worker to be up (and idle) before this script's end.
      await new Promise((r) => setTimeout(r, 1000));
      console.log('end of script');
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim().split('\n')).toEqual(['NOT_INITIALIZED', 'end of script']);
    // Killed by the timeout (a worker keeping the process alive) would leave status null.
    expect(r.status).toBe(0);
  }, 60_000);

  it('keeps the protocol state across runs (yao2pc sets up once); free() drops it', async () => {
    const two = await sessions(2, true);
    const phases: string[][] = [];
    const runOnce = async () => {
      const seen: string[] = [];
      await Promise.all(
        two.s.map((s, p) => s.run(aes, { inputs: [new Uint8Array(16).fill(p)], ...(p === 0 ? { onProgress: (x: Progress) => void seen.push(x.phase) } : {}) })),
      );
      phases.push([...new Set(seen)]);
    };
    await runOnce();
    await runOnce();
    two.s.forEach((s) => s.free());
    await runOnce();
    expect(phases[0]).toContain('setup');
    expect(phases[1]).not.toContain('setup');
    expect(phases[2]).toContain('setup');
    await two.close();
  });

  it('a worker that dies mid-run fails the run with WORKER_FAILED; the peers abort at once with that reason', async () => {
    const n = await sessions(3, true);
    let killedAt = 0;
    const kill = (p: Progress) => {
      if (killedAt || p.phase !== 'function-independent preprocessing') return;
      killedAt = Date.now();
      void engineOf(n.s[0]!)!.then((e) => e._kill());
    };
    const runs = n.s.map((s) =>
      rejection(s.preprocess('authgc', { andGates: 200_000, ...(s.party === 0 ? { onProgress: kill } : {}) })),
    );
    const [r0, r1, r2] = await Promise.all(runs);
    expect(killedAt).toBeGreaterThan(0);
    expect(r0!.error).toBeInstanceOf(WebmpcError);
    expect(r0!.error.code).toBe('WORKER_FAILED');
    expect(r0!.error.message).toMatch(/engine worker exited/);
    for (const r of [r1!, r2!]) {
      expect(r.error).toBeInstanceOf(TransportError);
      expect(r.error).toMatchObject({ code: 'PEER_DISCONNECTED', peer: 0 });
      expect((r.error as TransportError).remote?.code).toBe('WORKER_FAILED');
      // Told, not timed out: well under the 30 s receive timeout they would otherwise wait out
      // (a bound on the mechanism, not on speed: a loaded machine may take seconds).
      expect(r.at - killedAt).toBeLessThan(15_000);
    }
    await n.close();
  });

  it('a transport closed with an error mid-operation fails the operation at once, ending the worker', async () => {
    // At once: not when the worker next sends or receives (a long Wasm call can take a second).
    const before = _liveEngineWorkers();
    const two = await sessions(2, true);
    await Promise.all(two.s.map((s) => s.ready()));
    expect(_liveEngineWorkers()).toBe(before + 2);
    let closed = false;
    const close = (p: Progress) => {
      if (closed || p.phase !== 'function-independent preprocessing') return;
      closed = true;
      void two.s[0]!.transport.close(new TransportError('ABORTED', 'closed by the test'));
    };
    const runs = two.s.map((s) => rejection(s.preprocess('authgc', { andGates: 200_000, ...(s.party === 0 ? { onProgress: close } : {}) })));
    const r0 = await runs[0]!;
    // Ended before the operation was failed: no later send or receive needed to notice.
    expect(_liveEngineWorkers()).toBeLessThanOrEqual(before + 1);
    expect(closed).toBe(true);
    expect(r0.error).toMatchObject({ code: 'ABORTED', message: 'closed by the test' });
    expect((await runs[1]!).error).toBeInstanceOf(TransportError);
    await two.close();
    expect(_liveEngineWorkers()).toBe(before);
  }, 60_000);

  it('a peer’s abort does not cut off this party’s worker while it finishes its call (its own check may be the proof)', async () => {
    // Each of party 1's results is held 2 s, as a worker in a long final call would hold it (a check over
    // everything it received); party 0 aborts meanwhile. The host gives the call time to finish
    // rather than failing it with the peer's PEER_DISCONNECTED (at 500 ms it did not).
    const two = await sessions(2, true);
    await Promise.all(two.s.map((s) => s.ready()));
    (await (engineOf(two.s[1]!) as unknown as Promise<{ _holdResults(ms: number): void }>))._holdResults(2_000);
    let abortedAt = 0;
    const seenClosed = two.s[1]!.transport.closed.then((reason) => ((abortedAt = Date.now()), reason));
    const inputs = [unhex('000102030405060708090a0b0c0d0e0f'), unhex('00112233445566778899aabbccddeeff')];
    const runs = two.s.map((s, p) => s.run(aes, { inputs: [inputs[p]!], protocol: 'plain' }).then((o) => ({ o, at: Date.now() })));
    await runs[0];
    await two.s[0]!.transport.close(new TransportError('ABORTED', 'party 0 leaves with an abort'));
    const closedBy = await seenClosed;
    expect(closedBy).toMatchObject({ code: 'PEER_DISCONNECTED', peer: 0 });
    const r1 = await runs[1]!;
    // The abort reached party 1 while its call was still in progress, and the call still settled.
    expect(abortedAt).toBeGreaterThan(0);
    expect(abortedAt).toBeLessThanOrEqual(r1.at);
    expect(hex(r1.o[0])).toBe('69c4e0d86a7b0430d8cdb78070b4c55a');
    await two.close();
  }, 60_000);

  it('close() during a threaded call resolves only once every worker it started is ended, even one still starting', async () => {
    // The instances' workers start with the call; closing at once finds them still starting.
    // close() frees the state (which stops the workers without waiting) and then stops them
    // again: it must wait for the first stop, not find the list empty and return early.
    const before = _liveEngineWorkers();
    const ts = createMemoryTransports(2, { recvTimeoutMs: 30_000 });
    const two = await Promise.all(ts.map((transport, party) => session({ transport, party, parties: 2, threads: 4 })));
    await Promise.all(two.map((s) => s.ready()));
    const calls = two.map((s) => rejection(s.preprocess('authgc', { andGates: 50_000 })));
    // Let the call agree its threads and start the instances' workers, then close.
    await new Promise((r) => setTimeout(r, 50));
    await Promise.all(two.map((s) => s.close()));
    expect(_liveEngineWorkers()).toBe(before);
    await Promise.all(calls);
  }, 60_000);

  it('relays the workers’ messages at most one bounded slice per macrotask, however many arrive at once', async () => {
    // Node delivers a worker port's whole backlog in one turn of the event loop: without the
    // slices, a burst of sends would hold the thread (and the transport's heartbeats) for all of it.
    const n = await sessions(3, true);
    await Promise.all(n.s.map((s) => s.ready()));
    _relayStats(true);
    await Promise.all(n.s.map((s) => s.preprocess('authgc', { andGates: 20_000 })));
    const stats = _relayStats();
    await n.close();
    expect(stats.messages).toBeGreaterThan(100);
    expect(stats.maxSliceMessages).toBeLessThanOrEqual(RELAY_SLICE.messages);
    expect(stats.maxSliceBytes).toBeLessThanOrEqual(Math.max(RELAY_SLICE.bytes, stats.maxMessageBytes));
    console.log(
      `relay: ${stats.messages} messages in ${stats.slices} slices (${stats.deferred} left some for the next); ` +
        `at most ${stats.maxSliceMessages} messages and ${stats.maxSliceBytes} bytes a slice, largest message ${stats.maxMessageBytes} bytes`,
    );
  }, 60_000);

  it('refuses a worker option that is not a boolean', async () => {
    const [t] = createMemoryTransports(2);
    const r = await rejection(session({ transport: t!, party: 0, parties: 2, sessionId: new Uint8Array(32), worker: 'yes' as never }));
    expect(r.error).toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});


