// Issue 10 item 9: the owners a builder circuit declares are the owners Session.run uses. Before,
// `b.input(1, 32)` declared before `b.input(0, 32)` was silently run as if input 0 were party 0's,
// so "is party 1's 99 above party 0's 10?" came out false. Also the wording of input errors.
import { beforeAll, describe, expect, it } from 'vitest';
import { init, prepareCircuit, WebmpcError } from '../../dist/index.js';
import { CircuitBuilder } from '../../dist/circuit/index.js';
import { be, hex, pair, rejection } from './helpers.js';

beforeAll(async () => {
  await init();
});

/** Input 0 is party 1's, input 1 is party 0's; the output is (party 1's value > party 0's). */
function reversed() {
  const b = new CircuitBuilder();
  const theirs = b.input(1, 32);
  const mine = b.input(0, 32);
  b.output(theirs.gt(mine).toUInt());
  return b.build();
}

describe('input owners travel with the circuit', () => {
  for (const protocol of ['yao2pc', 'plain'] as const) {
    for (const garbler of protocol === 'yao2pc' ? [0, 1] : [undefined]) {
      it(`reversed declaration, ${protocol}${garbler === undefined ? '' : ` (garbler ${garbler})`}: party 1's 99 > party 0's 10 is true, and 5 > 10 false`, async () => {
        const [s0, s1, close] = await pair();
        const c = reversed();
        const roles = garbler === undefined ? {} : { garbler };
        for (const [v1, expected] of [
          [99, '01'],
          [5, '00'],
        ] as const) {
          const [o0, o1] = await Promise.all([
            s0.run(c, { inputs: [be(10, 4)], protocol, ...roles }),
            s1.run(c, { inputs: [be(v1, 4)], protocol, ...roles }),
          ]);
          expect([hex(o0[0]), hex(o1[0])]).toEqual([expected, expected]);
        }
        await close();
      });
    }
  }

  it('a PreparedCircuit made from a builder circuit keeps its owners; Bristol text and binary bytes have none', async () => {
    const c = reversed();
    expect(prepareCircuit(c).owners).toEqual([1, 0]);
    expect(prepareCircuit(c.toBristol()).owners).toBeUndefined();
    expect(prepareCircuit(c.toBinary()).owners).toBeUndefined();
    // Prepared once, run as such: still the right answer.
    const prepared = prepareCircuit(c);
    const [s0, s1, close] = await pair();
    const [o0] = await Promise.all([s0.run(prepared, { inputs: [be(10, 4)] }), s1.run(prepared, { inputs: [be(99, 4)] })]);
    expect(hex(o0[0])).toBe('01');
    // The same circuit as Bristol text (no owners) with explicit owners gives the same answer.
    const text = c.toBristol();
    const [t0] = await Promise.all([
      s0.run(text, { inputs: [be(10, 4)], owners: [1, 0] }),
      s1.run(text, { inputs: [be(99, 4)], owners: [1, 0] }),
    ]);
    expect(hex(t0[0])).toBe('01');
    // A freed prepared circuit is refused before anything is sent.
    prepared.free();
    await expect(s0.run(prepared, { inputs: [be(10, 4)] })).rejects.toThrow(/this PreparedCircuit was freed/);
    await close();
  });

  it('explicit owners that agree with the circuit are accepted; ones that contradict it are refused before anything is sent', async () => {
    const [s0, s1, close] = await pair();
    const c = reversed();
    const [o0] = await Promise.all([s0.run(c, { inputs: [be(10, 4)], owners: [1, 0] }), s1.run(c, { inputs: [be(99, 4)], owners: [1, 0] })]);
    expect(hex(o0[0])).toBe('01');
    const sent = s0.bytesSent;
    const peer = rejection(s1.run(c, { inputs: [be(99, 4)] }));
    const r = await rejection(s0.run(c, { inputs: [be(10, 4)], owners: [0, 1] }));
    expect(r.error).toBeInstanceOf(WebmpcError);
    expect(r.error.code).toBe('INVALID_ARGUMENT');
    expect(r.error.message).toBe('owners contradict the circuit: its input value 0 belongs to party 1, not 0');
    expect(s0.bytesSent).toBe(sent);
    expect((await peer).error).toMatchObject({ code: 'PEER_DISCONNECTED' });
    await close();
  });

  it('a builder circuit naming a party the session does not have is refused', async () => {
    const b = new CircuitBuilder();
    b.output(b.input(0, 8).add(b.input(2, 8)));
    const [s0, , close] = await pair();
    await expect(s0.run(b.build(), { inputs: [be(1, 1)] })).rejects.toThrow(/owners must name a party in \[0, 2\) for each of the 2 input values/);
    await close();
  });
});

describe('input errors name the circuit input and count correctly', () => {
  // Party 0 owns inputs 0 (8 bits) and 2 (16 bits); party 1 owns input 1 (1 bit).
  const b = new CircuitBuilder();
  const a = b.input(0, 8);
  const bit = b.inputBit(1);
  const w = b.input(0, 16);
  b.output(a.xor(b.mux(bit, b.constant(1, 8), 0)));
  b.output(w);
  const c = b.build();

  const message = async (party: 0 | 1, inputs: Uint8Array[]) => {
    const [s0, s1, close] = await pair();
    const r = await rejection([s0, s1][party]!.run(c, { inputs }));
    await close();
    expect(r.error.code).toBe('INVALID_ARGUMENT');
    return r.error.message as string;
  };

  it('a wrong length names the circuit input index (not the position in this party\'s list), with singular and plural right', async () => {
    expect(await message(0, [new Uint8Array(1), new Uint8Array(1)])).toBe(
      'the value for circuit input 2 (inputs[1]) is 16 bits wide: it needs 2 bytes, not 1',
    );
    expect(await message(0, [new Uint8Array(2), new Uint8Array(2)])).toBe(
      'the value for circuit input 0 (inputs[0]) is 8 bits wide: it needs 1 byte, not 2',
    );
    expect(await message(1, [new Uint8Array(2)])).toBe('the value for circuit input 1 (inputs[0]) is 1 bit wide: it needs 1 byte, not 2');
  });

  it('a wrong count says which inputs this party owns', async () => {
    expect(await message(0, [new Uint8Array(1)])).toBe('party 0 owns 2 input values of the circuit (inputs 0, 2); 1 given');
    expect(await message(1, [])).toBe('party 1 owns 1 input value of the circuit (input 1); 0 given');
  });
});
