// The session API over the in-memory transport: outputs per assignment, progress, cancellation,
// plain vs yao2pc agreement, argument errors.
import { beforeAll, describe, expect, it } from 'vitest';
import { createMemoryTransports, init, ProtocolAbort, session, TransportError, WebmpcError, type Progress } from '../../dist/index.js';
import { CircuitBuilder } from '../../dist/circuit/index.js';
import { referenceCircuit } from '../helpers.js';
import { hex, pair, unhex } from './helpers.js';

const aes = referenceCircuit('aes_128.txt');

beforeAll(async () => {
  await init();
});

describe('session', () => {
  it('agrees on a session id and reveals each output only to its parties', async () => {
    const [s0, s1, close] = await pair();
    expect(hex(s0.sessionId)).toBe(hex(s1.sessionId));
    // max(a, b) to party 0 only, (a < b) to party 1 only, a + b to both.
    const b = new CircuitBuilder();
    const x = b.input(0, 16);
    const y = b.input(1, 16);
    b.output(x.max(y));
    b.output(x.lt(y).toUInt());
    b.output(x.add(y));
    const c = b.build();
    const outputs = [[0], [1], [0, 1]];
    const [o0, o1] = await Promise.all([
      s0.run(c, { inputs: [unhex('1234')], outputs }),
      s1.run(c, { inputs: [unhex('0fff')], outputs }),
    ]);
    expect(o0.map(hex)).toEqual(['1234', undefined, '2233']);
    expect(o1.map(hex)).toEqual([undefined, '00', '2233']);
    // The plain protocol computes the same thing.
    const [p0] = await Promise.all([
      s0.run(c, { inputs: [unhex('1234')], outputs, protocol: 'plain' }),
      s1.run(c, { inputs: [unhex('0fff')], outputs, protocol: 'plain' }),
    ]);
    expect(p0.map(hex)).toEqual(['1234', undefined, '2233']);
    await close();
  });

  it('reports progress by phase (setup once, then evaluating) and runs AES-128 with the garbler on either side', async () => {
    for (const garbler of [0, 1]) {
      const [s0, s1, close] = await pair();
      const seen: Progress[] = [];
      const run = () =>
        Promise.all([
          s0.run(aes, { inputs: [unhex('000102030405060708090a0b0c0d0e0f')], garbler, onProgress: (p) => seen.push(p) }),
          s1.run(aes, { inputs: [unhex('00112233445566778899aabbccddeeff')], garbler }),
        ]);
      const [o0, o1] = await run();
      expect(hex(o0[0])).toBe('69c4e0d86a7b0430d8cdb78070b4c55a');
      expect(hex(o1[0])).toBe('69c4e0d86a7b0430d8cdb78070b4c55a');
      // The base OTs first (0 of 1, then 1 of 1), then gates; the last report is the whole circuit.
      expect(seen.filter((p) => p.phase === 'setup').map((p) => p.done)).toEqual([0, 1]);
      const phases = seen.map((p) => p.phase);
      expect(phases.indexOf('evaluating')).toBeGreaterThan(phases.lastIndexOf('setup'));
      const last = seen.at(-1)!;
      expect(last.phase).toBe('evaluating');
      expect(last.done).toBe(last.total);
      expect([last.gatesDone, last.gatesTotal]).toEqual([last.done, last.total]);
      const bytes = last.bytesSent;
      // The garbler's tables alone are 32 bytes per AND gate (6400 of them); the evaluator sends
      // little besides its OT messages.
      if (garbler === 0) expect(bytes).toBeGreaterThanOrEqual(6400 * 32);
      else expect(bytes).toBeLessThan(6400 * 32);
      expect(s0.bytesSent).toBeGreaterThanOrEqual(bytes);
      // A second run reuses the setup: no setup phase.
      seen.length = 0;
      const [again] = await run();
      expect(hex(again[0])).toBe('69c4e0d86a7b0430d8cdb78070b4c55a');
      expect(seen.some((p) => p.phase === 'setup')).toBe(false);
      await close();
    }
  });

  it('cancels through an AbortSignal: this run rejects with ABORTED and the peer rejects too', async () => {
    const [s0, s1, close] = await pair();
    // A long circuit: 2000 chained 64-bit additions (126000 ANDs; evaluation reports progress per chunk).
    const b = new CircuitBuilder();
    let acc = b.input(0, 64);
    const y = b.input(1, 64);
    for (let i = 0; i < 2000; i++) acc = acc.add(y).xor(y);
    b.output(acc);
    const c = b.build();
    const controller = new AbortController();
    const zero = new Uint8Array(8);
    const results = await Promise.allSettled([
      s0.run(c, {
        inputs: [zero],
        signal: controller.signal,
        onProgress: (p) => p.phase === 'evaluating' && controller.abort(),
      }),
      s1.run(c, { inputs: [zero] }),
    ]);
    const [r0, r1] = results as [PromiseRejectedResult, PromiseRejectedResult];
    expect(r0.status).toBe('rejected');
    expect(r0.reason).toBeInstanceOf(TransportError);
    expect(r0.reason.code).toBe('ABORTED');
    expect(r1.status).toBe('rejected');
    expect(r1.reason).toBeInstanceOf(WebmpcError);
    // An already-aborted signal rejects before anything is sent.
    await expect(s0.run(c, { inputs: [zero], signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'ABORTED' });
    await close();
  });

  it('refuses bad arguments with typed errors, naming the option', async () => {
    const [s0, , close] = await pair();
    const bad = async (run: Promise<unknown>, text: RegExp) => {
      const err = await run.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(WebmpcError);
      expect(err).toMatchObject({ code: 'INVALID_ARGUMENT' });
      expect((err as Error).message).toMatch(text);
    };
    await bad(s0.run(aes, { inputs: [new Uint8Array(15)] }), /circuit input 0 .*16 bytes, not 15/);
    await bad(s0.run(aes, { inputs: [new Uint8Array(16)], owners: [0] }), /owners/);
    await bad(s0.run(aes, { inputs: [new Uint8Array(16)], outputs: [[]] }), /output value 0/);
    await bad(s0.run(aes, { inputs: [new Uint8Array(16)], outputs: [[2]] }), /outputs/);
    await bad(s0.run(aes, { inputs: [new Uint8Array(16)], garbler: 2 }), /garbler/);
    await bad(s0.run(aes, { inputs: [new Uint8Array(16)], protocol: 'nope' as 'plain' }), /unknown protocol 'nope' \(known: yao2pc, authgc, plain, mascot, teleport-yao\)/);
    // A role the protocol does not take is refused rather than silently ignored.
    await bad(s0.run(aes, { inputs: [new Uint8Array(16)], protocol: 'plain', garbler: 1 } as never), /option 'garbler' .* 'plain'/);
    await bad(s0.run({ kind: 'program' } as never, { inputs: [] }), /runs Boolean circuits, not programs/);
    await expect(s0.run('1 2\nbroken', { inputs: [] })).rejects.toMatchObject({ code: 'MALFORMED_CIRCUIT' });
    await expect(session({ transport: createMemoryTransports(2)[0]!, party: 1, parties: 2 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await close();
  });

  it('aborts both parties with PARAMETER_MISMATCH on different circuits, and stays in step for the next run', async () => {
    const [s0, s1, close] = await pair();
    const add = referenceCircuit('adder64.txt');
    const sub = referenceCircuit('sub64.txt');
    const x = unhex('0000000000000005');
    const y = unhex('0000000000000003');
    const results = await Promise.allSettled([s0.run(add, { inputs: [x] }), s1.run(sub, { inputs: [y] })]);
    for (const r of results) {
      expect((r as PromiseRejectedResult).reason).toBeInstanceOf(ProtocolAbort);
      expect((r as PromiseRejectedResult).reason.code).toBe('PARAMETER_MISMATCH');
      expect((r as PromiseRejectedResult).reason.message).toMatch(/disagrees on the hash/);
    }
    // Both saw the verdict from the exchanged records and nothing is left unread: same session,
    // same circuit now, right answer.
    const [o0, o1] = await Promise.all([s0.run(sub, { inputs: [x] }), s1.run(sub, { inputs: [y] })]);
    expect([hex(o0[0]), hex(o1[0])]).toEqual(['0000000000000002', '0000000000000002']);
    await close();
  });
});
