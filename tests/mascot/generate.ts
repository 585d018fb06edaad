// Random arithmetic programs for the property tests, built with the SDK's ProgramBuilder from a
// seeded generator, with random in-range inputs (edge values often) for every party.
import { ProgramBuilder, type Program, type Value } from '../../dist/program/index.js';
import { WebmpcError } from '../../dist/index.js';
import { Rng, P } from './reference.js';

export interface Generated {
  program: Program;
  /** One value per program input, in program order. */
  values: bigint[];
  seed: number;
}

const WIDTHS = [1, 2, 3, 8, 16, 31, 32, 63, 64];

/** An in-range value for an input of this kind: an edge value half the time. */
function inputValue(rng: Rng, type: 'unsigned' | 'signed' | 'field', bits: number, field: 'prime' | 'binary'): bigint {
  if (type === 'field') {
    if (field === 'binary') return rng.pick([0n, 1n, (1n << 128n) - 1n, rng.bits(128)]);
    return rng.pick([0n, 1n, P - 1n, rng.bits(128) % P]);
  }
  const lo = type === 'unsigned' ? 0n : -(1n << BigInt(bits - 1));
  const hi = type === 'unsigned' ? (1n << BigInt(bits)) - 1n : (1n << BigInt(bits - 1)) - 1n;
  if (rng.chance(0.5)) return rng.pick([lo, hi, 0n, lo === 0n ? 1n : -1n].filter((v) => v >= lo && v <= hi));
  return lo + (rng.bits(bits + 8) % (hi - lo + 1n));
}

/** One random program for `parties` parties whose preprocessing stays within `budget` triples + bits. */
export async function randomProgram(seed: number, parties: number, field: 'prime' | 'binary', budget: number): Promise<Generated> {
  for (let attempt = 0; ; attempt++) {
    const rng = new Rng(seed * 1000 + attempt);
    const b = new ProgramBuilder({ parties, field });
    const values: bigint[] = [];
    const pool: Value[] = [];
    const bits: Value[] = [];
    const nIn = parties + rng.int(parties + 2);
    for (let i = 0; i < nIn; i++) {
      const owner = i < parties ? i : rng.int(parties);
      const type = field === 'binary' ? 'field' : rng.pick(['unsigned', 'signed', 'unsigned', 'field'] as const);
      const width = rng.pick(WIDTHS);
      const v = type === 'field' ? b.element(owner) : type === 'unsigned' ? b.uint(owner, width) : b.sint(owner, width);
      // In GF(2^128) a select condition is a field input the test makes 0 or 1.
      const isBit = field === 'binary' ? rng.chance(0.3) : type === 'unsigned' && width === 1;
      values.push(isBit && field === 'binary' ? BigInt(rng.int(2)) : inputValue(rng, type, width, field));
      pool.push(v);
      if (isBit) bits.push(v);
    }
    const constant = () => (field === 'binary' ? rng.bits(rng.pick([1, 8, 128])) : rng.pick([0n, 1n, -1n, 3n, -(1n << 20n), BigInt(rng.int(70000)) - 35000n]));
    const steps = 8 + rng.int(16);
    for (let s = 0; s < steps; s++) {
      // Often build on the newest values, so programs get deep (many layers of multiplications).
      const a = rng.chance(0.5) ? pool[pool.length - 1 - rng.int(Math.min(3, pool.length))]! : rng.pick(pool);
      const c = rng.pick(pool);
      let r: Value | undefined;
      try {
        switch (rng.int(field === 'binary' ? 8 : 11)) {
          case 0: r = a.add(c); break;
          case 1: r = a.sub(c); break;
          case 2: r = rng.chance(0.5) ? a.neg() : a.add(constant()); break;
          case 3: r = a.mul(constant()); break;
          case 4: r = a.mul(c); break;
          case 5: r = rng.chance(0.3) ? b.constant(constant()) : a.sub(constant()); break;
          case 6:
          case 7:
            if (bits.length) r = rng.pick(bits).select(a, c);
            break;
          default: {
            // Comparisons: the builder derives the width from the operands' ranges; operands whose
            // range is unknown or too wide are refused, and another step is drawn.
            const op = rng.pick(['lt', 'le', 'gt', 'ge', 'eq', 'ne', 'max', 'min'] as const);
            r = rng.chance(0.2) ? a[op](rng.pick([0, 1, -1, 255])) : a[op](c);
            if (op !== 'max' && op !== 'min') bits.push(r);
          }
        }
      } catch (e) {
        if (!(e instanceof WebmpcError && e.code === 'INVALID_ARGUMENT')) throw e;
      }
      if (r) pool.push(r);
    }
    const outs = 1 + rng.int(3);
    for (let o = 0; o < outs; o++) {
      const v = o === 0 ? pool[pool.length - 1]! : rng.pick(pool);
      const to = rng.pick([undefined, [rng.int(parties)], [0, parties - 1], [...Array(parties).keys()].filter(() => rng.chance(0.6))]);
      b.output(v, to && to.length ? { to } : {});
    }
    const program = await b.build();
    const need = program.requirements();
    if (need.triples + need.bits <= budget) return { program, values, seed };
  }
}
