// MASCOT through the SDK (session.run with protocol 'mascot', in-memory transports) against the
// BigInt reference: random programs from a seeded generator for 2, 3 and 5 parties in both
// fields (every party checks every output it is meant to see, and sees nothing else), and
// comparisons at the edges of their ranges. Seeds are in the test names; MASCOT_SEED=<n> shifts
// them to explore more.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, type Session } from '../../dist/index.js';
import { ProgramBuilder, type Program } from '../../dist/program/index.js';
import { group, type Group } from '../session/helpers.js';
import { randomProgram } from './generate.js';
import { decode, evaluate, P } from './reference.js';

const BASE = Number(process.env.MASCOT_SEED ?? 0);

beforeAll(async () => {
  await init();
});

/** Runs `program` at every party with its share of `values`; returns each party's decoded outputs. */
export async function runAll(sessions: Session[], program: Program, values: bigint[]): Promise<(bigint | undefined)[][]> {
  const outs = await Promise.all(
    sessions.map((s, party) => {
      const mine = program.inputsOf(party).map((i) => values[i]!);
      return s.run(program, { protocol: 'mascot', inputs: program.encodeInputs(party, mine) });
    }),
  );
  return outs.map((o) => program.decodeOutputs(o));
}

/** What party `party` must see: the reference outputs revealed to it, undefined elsewhere. */
function expected(program: Program, values: bigint[], party: number): (bigint | undefined)[] {
  const want = evaluate(decode(program.bytes), values);
  return want.map((v, i) => (program.outputs[i]!.includes(party) ? v : undefined));
}

const CASES: [parties: number, field: 'prime' | 'binary', programs: number, budget: number][] = [
  [2, 'prime', 6, 600],
  [2, 'binary', 4, 200],
  [3, 'prime', 3, 300],
  [3, 'binary', 2, 80],
  [5, 'prime', 2, 150],
  [5, 'binary', 2, 25],
];

describe.each(CASES)('random programs, %i parties, %s field, against BigInt', (parties, field, programs, budget) => {
  let g: Group;
  beforeAll(async () => {
    g = await group(parties, 120_000);
  });
  afterAll(async () => {
    await Promise.all(g.sessions.map((s) => s.close()));
  });

  for (let k = 0; k < programs; k++) {
    const seed = BASE + 100 * parties + (field === 'binary' ? 50 : 0) + k;
    it(`seed ${seed}`, async () => {
      const { program, values } = await randomProgram(seed, parties, field, budget);
      const got = await runAll(g.sessions, program, values);
      for (let p = 0; p < parties; p++) expect(got[p], `party ${p}`).toEqual(expected(program, values, p));
    }, 120_000);
  }
});

describe('comparisons at the edges (2 parties, F_p)', () => {
  let g: Group;
  beforeAll(async () => {
    g = await group(2, 120_000);
  });
  afterAll(async () => {
    await Promise.all(g.sessions.map((s) => s.close()));
  });

  type Op = 'lt' | 'le' | 'gt' | 'ge' | 'eq' | 'ne' | 'max';
  const plain: Record<Op, (x: bigint, y: bigint) => bigint> = {
    lt: (x, y) => (x < y ? 1n : 0n),
    le: (x, y) => (x <= y ? 1n : 0n),
    gt: (x, y) => (x > y ? 1n : 0n),
    ge: (x, y) => (x >= y ? 1n : 0n),
    eq: (x, y) => (x === y ? 1n : 0n),
    ne: (x, y) => (x !== y ? 1n : 0n),
    max: (x, y) => (x > y ? x : y),
  };

  /** x (party 0) vs y (party 1), both of `type`/`bits`: each of `ops` for each pair. */
  async function compare(type: 'unsigned' | 'signed', bits: number, pairs: [bigint, bigint][], ops: Op[] = ['lt', 'le', 'gt', 'ge', 'eq', 'ne', 'max']) {
    const b = new ProgramBuilder({ parties: 2 });
    const xs = pairs.map(() => b.input(0, { type, bits }));
    const ys = pairs.map(() => b.input(1, { type, bits }));
    xs.forEach((x, i) => {
      for (const op of ops) b.output(x[op](ys[i]!));
    });
    const program = await b.build();
    const values = [...pairs.map((p) => p[0]), ...pairs.map((p) => p[1])];
    const got = await runAll(g.sessions, program, values);
    const want = pairs.flatMap(([x, y]) => ops.map((op) => plain[op](x, y)));
    expect(got[0]).toEqual(want);
    expect(got[1]).toEqual(want);
    // The reference agrees, so the builder's derived widths admit these operands.
    expect(evaluate(decode(program.bytes), values)).toEqual(want);
  }

  it('unsigned 64-bit: 0 against max, max against max − 1, equal maxima (lt, le, eq)', async () => {
    const max = (1n << 64n) - 1n;
    await compare('unsigned', 64, [
      [0n, max],
      [max, max - 1n],
      [max, max],
    ], ['lt', 'le', 'eq']);
  }, 120_000);

  it('signed 8-bit: minimum, maximum, −1 against 0, equal negatives', async () => {
    await compare('signed', 8, [
      [-128n, 127n],
      [127n, -128n],
      [-1n, 0n],
      [-5n, -5n],
      [-128n, -128n],
    ]);
  }, 120_000);

  it('1-bit and mixed widths: unsigned 16 vs signed 16 needs 17 bits, and the builder says so', async () => {
    const b = new ProgramBuilder({ parties: 2 });
    const u = b.uint(0, 16);
    const s = b.sint(1, 16);
    const bit0 = b.uint(0, 1);
    const bit1 = b.uint(1, 1);
    b.output(u.lt(s));
    b.output(s.le(u));
    b.output(u.eq(s));
    b.output(bit0.lt(bit1));
    b.output(bit0.and(bit1).or(bit1.not()));
    const program = await b.build();
    // The LT instruction's width byte: max(|0 − (2^15 − 1)|, |(2^16 − 1) − (−2^15)|) < 2^17.
    expect(decode(program.bytes).instrs.filter((i) => i.op >= 7 && i.op <= 9).map((i) => i.k)).toEqual([17, 17, 17, 1]);
    const cases: [bigint, bigint, bigint, bigint][] = [
      [65535n, -32768n, 0n, 1n],
      [0n, -1n, 1n, 1n],
      [7n, 7n, 1n, 0n],
      [0n, 32767n, 0n, 0n],
    ];
    for (const [x, y, p, q] of cases) {
      const got = await runAll(g.sessions, program, [x, y, p, q]);
      const want: bigint[] = [x < y, y <= x, x === y, p < q].map((t): bigint => (t ? 1n : 0n)).concat([(p & q) | (1n - q)]);
      expect(got[0]).toEqual(want);
      expect(got[1]).toEqual(want);
    }
  }, 120_000);

  it('field elements and negative outputs: −1 is p − 1 as a field element, −1 as a signed output', async () => {
    const b = new ProgramBuilder({ parties: 2 });
    const x = b.sint(0, 32);
    const f = b.element(1);
    b.output(x.neg()); // signed (range may be negative)
    b.output(x.neg(), { as: 'field' });
    b.output(f.mul(f).add(x), { to: 1 });
    const program = await b.build();
    const got = await runAll(g.sessions, program, [1n, P - 2n]);
    expect(got[0]).toEqual([-1n, P - 1n, undefined]);
    expect(got[1]).toEqual([-1n, P - 1n, 5n]); // (−2)² + 1
  }, 120_000);
});
