// The TypeScript program builder and the program format: byte-exact agreement with the Rust
// builder (the Vickrey auction and the products program, both fields), a known-answer encoding
// written by hand from program.rs's format table, round trips through the Rust decoder, a fuzz of
// malformed programs (each a typed MALFORMED_PROGRAM / PROGRAM_TOO_LARGE, never a trap or
// another error), the widths the builder derives for comparisons, refusals, and the value
// encodings of the session's byte convention. No network here.
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { init, WebmpcError, createMemoryTransports, session, type ProgramSource } from '../../dist/index.js';
import {
  PRIME,
  Program,
  ProgramBuilder,
  isProgram,
  programFromBytes,
  vickreyAuction,
  vickreyBuilder,
  vickreyReference,
} from '../../dist/program/index.js';
import { hex, loadBaseline, unhex } from '../helpers.js';
import { decode, Rng } from './reference.js';

// The Rust example programs come from the bench/test module (never shipped).
let baseline: Awaited<ReturnType<typeof loadBaseline>>;

beforeAll(async () => {
  await init();
  baseline = await loadBaseline();
});

const code = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (e) {
    return e instanceof WebmpcError ? e.code : `not a WebmpcError: ${String(e)}`;
  }
  return undefined;
};

describe('the builder writes what the Rust builder writes', () => {
  it('the Vickrey auction, byte for byte, for several party counts, bid counts and widths', () => {
    for (const [n, bids, k] of [
      [2, 1, 32],
      [2, 2, 1],
      [2, 3, 8],
      [3, 7, 32],
      [4, 16, 64],
      [5, 33, 17],
      [2, 100, 32],
    ] as const) {
      const ts = vickreyBuilder({ parties: n, bids, bits: k }).encode();
      expect(hex(ts), `${n} parties, ${bids} bids of ${k} bits`).toBe(hex(baseline.mascotVickreyProgram(n, bids, k)));
    }
  });

  it("the online benchmark's products program, in both fields", () => {
    for (const field of ['prime', 'binary'] as const) {
      for (const [n, m] of [
        [2, 1],
        [3, 5],
      ] as const) {
        const b = new ProgramBuilder({ parties: n, field });
        const x = b.element(0);
        const y = b.element(1);
        let acc = x.mul(y);
        for (let i = 1; i < m; i++) acc = acc.add(x.mul(y));
        b.output(acc);
        expect(hex(b.encode())).toBe(hex(baseline.mascotProductsProgram(field, n, m)));
      }
    }
  });

  it('a program using every opcode, against bytes written by hand from the format table', () => {
    const b = new ProgramBuilder({ parties: 3 });
    const x = b.uint(0, 32);
    const y = b.sint(2, 8);
    const z = b.element(1);
    const m = x.add(y).mul(z);
    const c = x.lt(y); // x ∈ [0, 2^32), y ∈ [−128, 128): |x − y| < 2^33
    const k = b.constant(7);
    const e = m.eq(k, { bits: 64 });
    const u = c.select(m, k).mul(3).add(1).neg();
    const q = u.sub(e);
    b.output(q, { as: 'field' });
    b.output(q.le(x, { bits: 64 }), { to: [2, 0] });
    const zero15 = '00'.repeat(15);
    const want =
      '574d5041' + '01' + '00' + '0300' + '03' + '0b' + '02' +
      '000120' + '020208' + '010000' +
      '010001' + '060302' + '07000121' + `0b07${zero15}` + '09040640' + '0a050406' +
      `040803${zero15}` + `050901${zero15}` + '030a' + '020b07' + '080c0040' +
      '0c0000' + '0d01020002';
    expect(hex(b.encode())).toBe(want);
    // The same program as seen by the independent test reader.
    const d = decode(b.encode());
    expect(d.outputs).toEqual([
      { value: 12, kind: 0, to: null },
      { value: 13, kind: 1, to: [0, 2] },
    ]);
  });

  it('constants: negatives are p − |c| in F_p, subtraction of a constant adds its negation; GF(2^128) constants as bits', () => {
    const b = new ProgramBuilder({ parties: 2 });
    const x = b.uint(0, 8);
    b.output(x.sub(5));
    b.output(x.mul(-1));
    const d = decode(b.encode());
    expect(d.instrs.map((i) => i.c)).toEqual([PRIME - 5n, PRIME - 1n]);
    const g = new ProgramBuilder({ parties: 2, field: 'binary' });
    const f = g.element(1);
    g.output(f.sub((1n << 128n) - 1n).mul(0x87));
    const e = decode(g.encode());
    expect(e.field).toBe('binary');
    expect(e.instrs.map((i) => [i.op, i.c])).toEqual([
      [0x05, (1n << 128n) - 1n],
      [0x04, 0x87n],
    ]);
  });
});

describe('programs from bytes', () => {
  it('round trip: the Rust decoder accepts what the builder writes; owners, kinds, outputs and hash survive', async () => {
    const built = await vickreyAuction({ parties: 3, bids: 5, bits: 20 });
    const loaded = await programFromBytes(built.bytes);
    expect(isProgram(loaded)).toBe(true);
    expect(hex(loaded.bytes)).toBe(hex(built.bytes));
    expect(hex(loaded.hash)).toBe(createHash('sha256').update(built.bytes).digest('hex'));
    expect(hex(built.hash)).toBe(hex(loaded.hash));
    expect(loaded.owners).toEqual([0, 1, 2, 0, 1]);
    expect(loaded.inputKinds).toEqual(Array(5).fill({ type: 'unsigned', bits: 20 }));
    expect(loaded.outputs).toEqual([
      [0, 1, 2],
      [0, 1, 2],
    ]);
    expect(loaded.outputKinds).toEqual(['unsigned', 'unsigned']);
    expect(loaded.parties).toBe(3);
    expect(loaded.field).toBe('prime');
    const need = loaded.requirements();
    // One input mask per bit of a 20-bit input (inputs are range-checked bit by bit).
    expect(need.masks).toEqual([40, 40, 20]);
    expect(need.triples).toBeGreaterThan(0);
    expect(need.bits).toBe(8 * (20 + 64 + 1)); // 4 matches, two 20-bit comparisons each: r′ and κ + 1 bits of r″
  });

  it('fuzz: mutated, truncated and random bytes are typed MALFORMED_PROGRAM / PROGRAM_TOO_LARGE, never a trap', async () => {
    const rng = new Rng(12);
    const seeds = [
      vickreyBuilder({ parties: 3, bids: 4, bits: 8 }).encode(),
      (() => {
        const b = new ProgramBuilder({ parties: 2, field: 'binary' });
        const x = b.element(0);
        b.output(x.mul(b.element(1)).add(3n), { to: 1 });
        return b.encode();
      })(),
    ];
    const outcome: Record<string, number> = {};
    for (let i = 0; i < 3000; i++) {
      const base = seeds[i % seeds.length]!;
      let bytes: Uint8Array;
      const kind = rng.int(4);
      if (kind === 0) {
        bytes = base.slice();
        for (let f = 1 + rng.int(3); f > 0; f--) bytes[rng.int(bytes.length)] = rng.int(256);
      } else if (kind === 1) {
        bytes = base.slice(0, rng.int(base.length));
      } else if (kind === 2) {
        bytes = Uint8Array.from([...base.slice(0, 8), ...Array.from({ length: rng.int(40) }, () => rng.int(256))]);
      } else {
        bytes = Uint8Array.from([...base, ...Array.from({ length: 1 + rng.int(4) }, () => rng.int(256))]);
      }
      let result: string;
      try {
        const p = await programFromBytes(bytes);
        // Accepted: the independent reader must read it too, and agree on the owners.
        expect(decode(bytes).inputs.map((x) => x.owner)).toEqual(p.owners);
        result = 'accepted';
      } catch (e) {
        expect(e, `mutation ${i}`).toBeInstanceOf(WebmpcError);
        result = (e as WebmpcError).code;
      }
      outcome[result] = (outcome[result] ?? 0) + 1;
    }
    expect(Object.keys(outcome).sort()).toEqual(expect.arrayContaining(['MALFORMED_PROGRAM', 'accepted']));
    expect(Object.keys(outcome).every((k) => ['MALFORMED_PROGRAM', 'PROGRAM_TOO_LARGE', 'accepted'].includes(k))).toBe(true);
    expect(outcome['MALFORMED_PROGRAM']).toBeGreaterThan(1000);
  });

  it('specific refusals from the Rust decoder: forward operand, non-canonical constant, comparison over GF(2^128), counts beyond the limits', async () => {
    const reject = async (bytes: Uint8Array) => {
      try {
        await programFromBytes(bytes);
      } catch (e) {
        return (e as WebmpcError).code;
      }
      return 'accepted';
    };
    const head = (field: number, nIn: number, nInstr: number, nOut: number) => [0x57, 0x4d, 0x50, 0x41, 1, field, 2, 0, nIn, nInstr, nOut];
    expect(await reject(Uint8Array.from([...head(0, 1, 1, 0), 0, 0, 0, 0x01, 0, 1]))).toBe('MALFORMED_PROGRAM'); // ADD 0, 1 at value 1
    expect(await reject(Uint8Array.from([...head(0, 0, 1, 0), 0x0b, ...Array(16).fill(0xff)]))).toBe('MALFORMED_PROGRAM'); // CONST ≥ p
    expect(await reject(Uint8Array.from([...head(1, 0, 1, 0), 0x0b, ...Array(16).fill(0xff)]))).toBe('accepted'); // any 16 bytes in GF(2^128)
    expect(await reject(Uint8Array.from([...head(1, 2, 1, 0), 0, 0, 0, 1, 0, 0, 0x07, 0, 1, 8]))).toBe('MALFORMED_PROGRAM'); // LT in GF(2^128)
    expect(await reject(Uint8Array.from([...head(0, 0, 0, 0).slice(0, 8), 0x81, 0x80, 0x80, 0x02, 0, 0]))).toBe('PROGRAM_TOO_LARGE'); // 2^22 + 1 values
    expect(await reject(unhex('574d5041020002000000'))).toBe('MALFORMED_PROGRAM'); // version 2
  });
});

describe('widths the builder derives for comparisons', () => {
  const widthOf = (f: (b: ProgramBuilder) => void) => {
    const b = new ProgramBuilder({ parties: 2 });
    f(b);
    return decode(b.encode()).instrs.filter((i) => i.op >= 7 && i.op <= 9).map((i) => i.k);
  };

  it('from the operands’ ranges: equal widths, sums, mixed signs, products, constants', () => {
    expect(widthOf((b) => b.output(b.uint(0, 8).lt(b.uint(1, 8))))).toEqual([8]);
    expect(widthOf((b) => b.output(b.uint(0, 8).add(b.uint(0, 8)).lt(b.uint(1, 16))))).toEqual([16]);
    expect(widthOf((b) => b.output(b.uint(0, 16).add(b.uint(0, 16)).ge(b.uint(1, 16))))).toEqual([17]);
    expect(widthOf((b) => b.output(b.sint(0, 8).eq(b.sint(1, 8))))).toEqual([8]);
    expect(widthOf((b) => b.output(b.uint(0, 8).le(b.sint(1, 8))))).toEqual([9]);
    expect(widthOf((b) => b.output(b.uint(0, 32).mul(b.uint(1, 32)).gt(0)))).toEqual([64]);
    expect(widthOf((b) => b.output(b.uint(0, 4).mul(-3).lt(b.uint(1, 1))))).toEqual([6]);
    expect(widthOf((b) => b.output(b.uint(0, 1).lt(b.uint(1, 1))))).toEqual([1]);
    expect(widthOf((b) => b.output(b.element(0).lt(b.element(1), { bits: 12 })))).toEqual([12]);
    // A select keeps the hull of its operands; max/min are a comparison and a select.
    expect(widthOf((b) => {
      const x = b.uint(0, 10);
      const y = b.sint(1, 4);
      b.output(x.max(y).lt(x));
    })).toEqual([11, 11]);
  });

  it('refuses an explicit { bits } narrower than the width derived from the operands, and takes a wider one', () => {
    const b = new ProgramBuilder({ parties: 2 });
    const x = b.uint(0, 32);
    const y = b.uint(1, 32);
    // 32-bit operands differ by less than 2^32: 32 bits is the derived width.
    for (const op of ['lt', 'le', 'gt', 'ge', 'eq'] as const) {
      const err = (() => {
        try {
          x[op](y, { bits: 16 });
        } catch (e) {
          return e as WebmpcError;
        }
      })();
      expect(err?.code, op).toBe('INVALID_ARGUMENT');
      expect(err?.message, op).toMatch(/\{ bits: 16 \} is narrower than the operands, whose difference needs 32 bits/);
    }
    expect(code(() => x.lt(y, { bits: 31 }))).toBe('INVALID_ARGUMENT');
    // The sum of two 64-bit values needs 65 bits: no promised width can cover it.
    expect(code(() => b.uint(0, 64).add(b.uint(0, 64)).lt(b.uint(1, 1), { bits: 64 }))).toBe('INVALID_ARGUMENT');
    // Equal or wider is fine, and is what the program then carries.
    expect(widthOf((g) => g.output(g.uint(0, 32).lt(g.uint(1, 32), { bits: 32 })))).toEqual([32]);
    expect(widthOf((g) => g.output(g.uint(0, 32).lt(g.uint(1, 32), { bits: 40 })))).toEqual([40]);
  });

  it('refuses comparisons it cannot size: unknown ranges, differences of 2^64 or more', () => {
    const b = new ProgramBuilder({ parties: 2 });
    expect(code(() => b.element(0).lt(b.uint(1, 8)))).toBe('INVALID_ARGUMENT');
    expect(code(() => b.uint(0, 64).add(b.uint(0, 64)).lt(b.uint(1, 1)))).toBe('INVALID_ARGUMENT');
    expect(code(() => b.uint(0, 64).lt(b.sint(1, 2)))).toBe('INVALID_ARGUMENT');
    expect(code(() => b.uint(0, 8).lt(b.uint(1, 8), { bits: 65 }))).toBe('INVALID_ARGUMENT');
    // Ranges that could wrap mod p are dropped: the product of two 60-bit values squared.
    const w = b.uint(0, 60).mul(b.uint(1, 60));
    expect(w.range).toBeDefined();
    expect(w.mul(w).range).toBeUndefined();
  });
});

describe('refusals of the builder (INVALID_ARGUMENT, PROGRAM_TOO_LARGE), before anything is built', () => {
  it('bad parties, fields, kinds, operands from another builder, non-bit conditions, GF(2^128) integers', () => {
    expect(code(() => new ProgramBuilder({ parties: 1 }))).toBe('INVALID_ARGUMENT');
    expect(code(() => new ProgramBuilder({ parties: 1025 }))).toBe('INVALID_ARGUMENT');
    expect(code(() => new ProgramBuilder({ parties: 2, field: 'rational' as never }))).toBe('INVALID_ARGUMENT');
    const b = new ProgramBuilder({ parties: 2 });
    const other = new ProgramBuilder({ parties: 2 });
    const x = b.uint(0, 8);
    expect(code(() => b.uint(2, 8))).toBe('INVALID_ARGUMENT');
    expect(code(() => b.uint(0, 0))).toBe('INVALID_ARGUMENT');
    expect(code(() => b.sint(0, 65))).toBe('INVALID_ARGUMENT');
    expect(code(() => x.add(other.uint(0, 8)))).toBe('INVALID_ARGUMENT');
    expect(code(() => x.select(x, x))).toBe('INVALID_ARGUMENT'); // an 8-bit value is no condition
    expect(code(() => x.not())).toBe('INVALID_ARGUMENT');
    expect(code(() => x.add(1.5))).toBe('INVALID_ARGUMENT');
    expect(code(() => x.add(PRIME))).toBe('INVALID_ARGUMENT');
    expect(code(() => b.output(x, { to: [] }))).toBe('INVALID_ARGUMENT');
    expect(code(() => b.output(x, { to: [2] }))).toBe('INVALID_ARGUMENT');
    expect(code(() => b.output(x, { as: 'float' as never }))).toBe('INVALID_ARGUMENT');
    const g = new ProgramBuilder({ parties: 2, field: 'binary' });
    expect(code(() => g.uint(0, 8))).toBe('INVALID_ARGUMENT');
    expect(code(() => g.element(0).lt(g.element(1), { bits: 8 }))).toBe('INVALID_ARGUMENT');
    expect(code(() => g.element(0).add(-1))).toBe('INVALID_ARGUMENT');
    expect(code(() => g.output(g.element(0), { as: 'unsigned' }))).toBe('INVALID_ARGUMENT');
    // A Program's layout is read from its bytes, never taken from the caller.
    const P = Program as unknown as new (...args: unknown[]) => unknown;
    expect(code(() => new P(Symbol('webmpc/program'), new Uint8Array(0), new Uint8Array(32), { field: 'prime', parties: 2, inputs: [], instructions: 0, outputs: [] }))).toBe('INVALID_ARGUMENT');
  });
});

describe('value encodings (the session byte convention)', () => {
  it('inputs: unsigned and signed integers in ceil(k/8) big-endian bytes, field elements in 16; out-of-range values refused without the value', async () => {
    const b = new ProgramBuilder({ parties: 2 });
    b.uint(0, 12);
    b.sint(0, 12);
    b.element(1);
    b.sint(1, 64);
    const p = await b.build();
    expect(hex(p.encodeInput(0, 4095))).toBe('0fff');
    expect(hex(p.encodeInput(1, -1))).toBe('ffff');
    expect(hex(p.encodeInput(1, -2048n))).toBe('f800');
    expect(hex(p.encodeInput(2, -1n))).toBe(hex(p.encodeInput(2, PRIME - 1n)));
    expect(hex(p.encodeInput(3, -(1n << 63n)))).toBe('8000000000000000');
    expect(p.encodeInputs(0, [1, -1]).map(hex)).toEqual(['0001', 'ffff']);
    for (const [i, v] of [
      [0, 4096],
      [0, -1],
      [1, 2048],
      [1, -2049],
      [2, PRIME],
      [3, 1n << 63n],
    ] as const) {
      try {
        p.encodeInput(i, v);
        expect.unreachable(`input ${i} accepted an out-of-range value`);
      } catch (e) {
        expect((e as WebmpcError).code).toBe('INVALID_ARGUMENT');
        expect((e as Error).message).not.toContain(String(v));
      }
    }
    // checkInput (what Session.run calls on the bytes): sizes and ranges.
    expect(p.checkInput(0, unhex('0fff'))).toBeUndefined();
    expect(p.checkInput(0, unhex('1000'))).toMatch(/bits set above bit 11/);
    expect(p.checkInput(0, unhex('0f'))).toMatch(/needs 2 bytes, not 1/);
    expect(p.checkInput(1, unhex('f800'))).toBeUndefined();
    expect(p.checkInput(1, unhex('f7ff'))).toMatch(/out of range/);
    expect(p.checkInput(1, unhex('0800'))).toMatch(/out of range/);
    expect(p.checkInput(2, new Uint8Array(16).fill(0xff))).toMatch(/not an element of F_p/);
    expect(p.checkInput(2, unhex('ffffffffffffffffffffffffffffff52'))).toBeUndefined(); // p − 1
  });

  it('outputs: 16 big-endian bytes, signed ones in two’s complement', async () => {
    const b = new ProgramBuilder({ parties: 2 });
    const x = b.sint(0, 8);
    b.output(x);
    b.output(x, { as: 'unsigned' });
    b.output(x, { as: 'field', to: 1 });
    const p = await b.build();
    expect(p.outputKinds).toEqual(['signed', 'unsigned', 'field']);
    expect(p.outputs).toEqual([[0, 1], [0, 1], [1]]);
    const minusTwo = unhex('fffffffffffffffffffffffffffffffe');
    expect(p.decodeOutputs([minusTwo, unhex('00000000000000000000000000000005'), undefined])).toEqual([-2n, 5n, undefined]);
    expect(code(() => p.decodeOutput(0, new Uint8Array(15)))).toBe('INVALID_ARGUMENT');
  });

  it('the Vickrey reference: ties to the lowest index, price = the highest other bid, 0 for one bid', () => {
    expect(vickreyReference([5n, 9n, 9n, 1n])).toEqual({ winner: 1, price: 9n });
    expect(vickreyReference([3n, 2n, 1n])).toEqual({ winner: 0, price: 2n });
    expect(vickreyReference([7n])).toEqual({ winner: 0, price: 0n });
  });
});

/** A 3-party program whose inputs and outputs involve parties 0 and 1 only. */
function threeParty() {
  const b = new ProgramBuilder({ parties: 3 });
  b.output(b.uint(0, 8).add(b.uint(1, 8)), { to: [0, 1] });
  return b.build();
}

describe('the mascot protocol refuses what it cannot run, before anything is sent', () => {
  it('a program source not made by webmpc/program, a program for another party count, a field that does not match', async () => {
    const program = await vickreyAuction({ parties: 2, bids: 2, bits: 8 });
    const fake: ProgramSource = {
      kind: 'program',
      hash: program.hash,
      owners: program.owners,
      outputs: program.outputs,
      checkInput: () => undefined,
    };
    const cases: [object, unknown, RegExp][] = [
      [fake, { protocol: 'mascot', inputs: [new Uint8Array(1)] }, /runs programs from webmpc\/program/],
      [await vickreyAuction({ parties: 2, bids: 2, bits: 8 }), { protocol: 'mascot', inputs: [new Uint8Array(1)], field: 'binary' }, /over the prime field, not the binary one/],
      [await threeParty(), { protocol: 'mascot', inputs: [new Uint8Array(1)] }, /the program is for 3 parties; this session has 2/],
      [await vickreyAuction({ parties: 2, bids: 2, bits: 8 }), { protocol: 'mascot', inputs: [new Uint8Array(2)] }, /needs 1 byte, not 2/],
    ];
    for (const [prog, options, text] of cases) {
      const transports = createMemoryTransports(2);
      const s = await Promise.all(transports.map((transport, party) => session({ transport, party, parties: 2 })));
      let sent = -1;
      const before = s[0]!.bytesSent;
      await expect(s[0]!.run(prog as ProgramSource, options as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringMatching(text) });
      sent = s[0]!.bytesSent - before;
      expect(sent).toBe(0);
      await Promise.all(transports.map((t) => t.close()));
    }
  });
});
