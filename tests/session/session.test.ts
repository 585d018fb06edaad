// The session API over the in-memory transport: outputs per assignment, progress, cancellation,
// plain vs yao2pc agreement, argument errors.
import { beforeAll, describe, expect, it } from 'vitest';
import { createMemoryTransports, init, ProtocolAbort, session, TransportError, WebmpcError, type Session } from '../../dist/index.js';
import { CircuitBuilder } from '../../dist/circuit/index.js';
import { referenceCircuit } from '../helpers.js';

const aes = referenceCircuit('aes_128.txt');
const hex = (b: Uint8Array | undefined) => (b ? Buffer.from(b).toString('hex') : undefined);
const unhex = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));

beforeAll(async () => {
  await init();
});

async function pair(): Promise<[Session, Session, () => Promise<void>]> {
  const [a, b] = createMemoryTransports(2, { recvTimeoutMs: 30_000 });
  const [s0, s1] = await Promise.all([session({ transport: a!, party: 0, parties: 2 }), session({ transport: b!, party: 1, parties: 2 })]);
  return [s0, s1, async () => void (await Promise.all([a!.close(), b!.close()]))];
}

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

  it('reports progress and runs AES-128 with the garbler on either side', async () => {
    for (const garbler of [0, 1]) {
      const [s0, s1, close] = await pair();
      const seen: number[] = [];
      let bytes = 0;
      const [o0, o1] = await Promise.all([
        s0.run(aes, {
          inputs: [unhex('000102030405060708090a0b0c0d0e0f')],
          garbler,
          onProgress: (p) => {
            seen.push(p.gatesDone / p.gatesTotal);
            bytes = p.bytesSent;
          },
        }),
        s1.run(aes, { inputs: [unhex('00112233445566778899aabbccddeeff')], garbler }),
      ]);
      expect(hex(o0[0])).toBe('69c4e0d86a7b0430d8cdb78070b4c55a');
      expect(hex(o1[0])).toBe('69c4e0d86a7b0430d8cdb78070b4c55a');
      expect(seen.at(-1)).toBe(1);
      // The garbler's tables alone are 32 bytes per AND gate (6400 of them); the evaluator sends
      // little besides its OT messages.
      if (garbler === 0) expect(bytes).toBeGreaterThanOrEqual(6400 * 32);
      else expect(bytes).toBeLessThan(6400 * 32);
      expect(s0.bytesSent).toBeGreaterThanOrEqual(bytes);
      await close();
    }
  });

  it('cancels through an AbortSignal: this run rejects with ABORTED and the peer rejects too', async () => {
    const [s0, s1, close] = await pair();
    // A long circuit: 4000 chained 64-bit additions.
    const b = new CircuitBuilder();
    let acc = b.input(0, 64);
    const y = b.input(1, 64);
    for (let i = 0; i < 4000; i++) acc = acc.add(y).xor(y);
    b.output(acc);
    const c = b.build();
    const controller = new AbortController();
    const zero = new Uint8Array(8);
    const results = await Promise.allSettled([
      s0.run(c, { inputs: [zero], signal: controller.signal, onProgress: () => controller.abort() }),
      s1.run(c, { inputs: [zero] }),
    ]);
    const [r0, r1] = results as [PromiseRejectedResult, PromiseRejectedResult];
    expect(r0.status).toBe('rejected');
    expect(r0.reason).toBeInstanceOf(TransportError);
    expect(r0.reason.code).toBe('ABORTED');
    expect(r1.status).toBe('rejected');
    expect(r1.reason).toBeInstanceOf(WebmpcError);
    // An already-aborted signal rejects before anything is sent.
    await expect(s0.run(c, { inputs: [zero], signal: AbortSignal.abort() })).rejects.toBeInstanceOf(Error);
    await close();
  });

  it('refuses bad arguments with typed errors', async () => {
    const [s0, s1, close] = await pair();
    await expect(s0.run(aes, { inputs: [new Uint8Array(15)] })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(s0.run(aes, { inputs: [new Uint8Array(16)], owners: [0] })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(s0.run(aes, { inputs: [new Uint8Array(16)], outputs: [[]] })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(s0.run('1 2\nbroken', { inputs: [] })).rejects.toMatchObject({ code: 'MALFORMED_CIRCUIT' });
    await expect(session({ transport: createMemoryTransports(2)[0]!, party: 1, parties: 2 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    void s1;
    await close();
  });

  it('aborts both parties with PARAMETER_MISMATCH on different circuits', async () => {
    const [s0, s1, close] = await pair();
    const add = referenceCircuit('adder64.txt');
    const sub = referenceCircuit('sub64.txt');
    const zero = new Uint8Array(8);
    const results = await Promise.allSettled([s0.run(add, { inputs: [zero] }), s1.run(sub, { inputs: [zero] })]);
    for (const r of results) {
      expect((r as PromiseRejectedResult).reason).toBeInstanceOf(ProtocolAbort);
      expect((r as PromiseRejectedResult).reason.code).toBe('PARAMETER_MISMATCH');
    }
    await close();
  });
});
