// The plaintext reference for the MASCOT tests: an independent reader of the program format
// (written from program.rs's format table, sharing no code with ts/program) and a BigInt
// evaluator over F_p (p = 2^128 − 173) and GF(2^128). Comparisons are evaluated on the signed
// integers the field elements stand for, and the evaluator refuses operands outside the width
// the program declares, so a wrong width from the builder's range tracking fails a test here
// instead of passing by luck.
import { refGfMul } from '../helpers.js';

export const P = (1n << 128n) - 173n;

export interface RefProgram {
  field: 'prime' | 'binary';
  parties: number;
  inputs: { owner: number; kind: number; bits: number }[];
  instrs: { op: number; args: number[]; c?: bigint; k?: number }[];
  outputs: { value: number; kind: number; to: number[] | null }[];
}

/** Decodes a program; throws on anything the format table does not allow. */
export function decode(b: Uint8Array): RefProgram {
  let at = 0;
  const u8 = () => {
    if (at >= b.length) throw new Error('truncated');
    return b[at++]!;
  };
  const varint = () => {
    let v = 0;
    for (let i = 0; ; i++) {
      if (i === 5) throw new Error('long varint');
      const x = u8();
      v += (x & 0x7f) * 2 ** (7 * i);
      if (!(x & 0x80)) {
        if (i > 0 && x === 0) throw new Error('non-minimal varint');
        return v;
      }
    }
  };
  const constant = () => {
    let v = 0n;
    for (let i = 0; i < 16; i++) v |= BigInt(u8()) << BigInt(8 * i);
    return v;
  };
  if (String.fromCharCode(u8(), u8(), u8(), u8()) !== 'WMPA' || u8() !== 1) throw new Error('header');
  const fb = u8();
  const field = fb === 0 ? 'prime' : fb === 1 ? 'binary' : undefined;
  if (!field) throw new Error('field');
  const parties = u8() + 256 * u8();
  const [nIn, nInstr, nOut] = [varint(), varint(), varint()];
  const inputs = Array.from({ length: nIn }, () => ({ owner: varint(), kind: u8(), bits: u8() }));
  const arity: Record<number, [number, 'c' | 'k' | null]> = {
    1: [2, null], 2: [2, null], 3: [1, null], 4: [1, 'c'], 5: [1, 'c'], 6: [2, null],
    7: [2, 'k'], 8: [2, 'k'], 9: [2, 'k'], 10: [3, null], 11: [0, 'c'],
  };
  const instrs = Array.from({ length: nInstr }, (_, i) => {
    const op = u8();
    const a = arity[op];
    if (!a) throw new Error('opcode');
    const args = Array.from({ length: a[0] }, () => varint());
    if (args.some((x) => x >= nIn + i)) throw new Error('forward operand');
    const ins: RefProgram['instrs'][number] = { op, args };
    if (a[1] === 'c') ins.c = constant();
    if (a[1] === 'k') ins.k = u8();
    return ins;
  });
  const outputs = Array.from({ length: nOut }, () => {
    const value = varint();
    const kind = u8();
    const n = varint();
    const to = Array.from({ length: n }, () => varint());
    return { value, kind, to: n === 0 ? null : to };
  });
  if (at !== b.length) throw new Error('trailing bytes');
  return { field, parties, inputs, instrs, outputs };
}

const signed = (x: bigint) => (x > (P - 1n) / 2n ? x - P : x);
const mod = (x: bigint) => ((x % P) + P) % P;

/**
 * Evaluates `prog` on `inputs` (one bigint per input, in program order: integers as integers,
 * field elements canonical) and returns each output as the SDK decodes it (signed outputs as
 * signed integers).
 */
export function evaluate(prog: RefProgram, inputs: bigint[]): bigint[] {
  const bin = prog.field === 'binary';
  const add = (a: bigint, b: bigint) => (bin ? a ^ b : mod(a + b));
  const sub = (a: bigint, b: bigint) => (bin ? a ^ b : mod(a - b));
  const mul = (a: bigint, b: bigint) => (bin ? refGfMul(a, b) : mod(a * b));
  const vals: bigint[] = inputs.map((v) => (bin ? v : mod(v)));
  const cmp = (a: bigint, b: bigint, k: number) => {
    const [x, y] = [signed(a), signed(b)];
    const d = x - y;
    if (d < -(1n << BigInt(k)) || d >= 1n << BigInt(k)) throw new Error(`comparison operands outside ${k} bits`);
    return [x, y] as const;
  };
  for (const { op, args, c, k } of prog.instrs) {
    const [a, b, d] = args.map((i) => vals[i]!);
    let r: bigint;
    switch (op) {
      case 1: r = add(a!, b!); break;
      case 2: r = sub(a!, b!); break;
      case 3: r = bin ? a! : mod(-a!); break;
      case 4: r = mul(a!, c!); break;
      case 5: r = add(a!, c!); break;
      case 6: r = mul(a!, b!); break;
      case 7: { const [x, y] = cmp(a!, b!, k!); r = x < y ? 1n : 0n; break; }
      case 8: { const [x, y] = cmp(b!, a!, k!); r = y <= x ? 1n : 0n; break; }
      case 9: { if (signed(a!) - signed(b!) >= 1n << BigInt(k!) || signed(b!) - signed(a!) >= 1n << BigInt(k!)) throw new Error('eq operands outside width'); r = a === b ? 1n : 0n; break; }
      case 10: r = add(mul(a!, sub(b!, d!)), d!); break;
      case 11: r = c!; break;
      default: throw new Error('opcode');
    }
    vals.push(r);
  }
  return prog.outputs.map((o) => (o.kind === 2 ? signed(vals[o.value]!) : vals[o.value]!));
}

/** A small seeded generator (sfc32), so property tests replay from their seed. */
export class Rng {
  #s: Uint32Array;
  constructor(seed: number) {
    this.#s = Uint32Array.of(0x9e3779b9, 0x243f6a88, 0xb7e15162, seed >>> 0);
    for (let i = 0; i < 16; i++) this.u32();
  }
  u32(): number {
    const s = this.#s;
    const t = (((s[0]! + s[1]!) >>> 0) + s[3]!) >>> 0;
    s[3] = (s[3]! + 1) >>> 0;
    s[0] = s[1]! ^ (s[1]! >>> 9);
    s[1] = (s[2]! + (s[2]! << 3)) >>> 0;
    s[2] = ((s[2]! << 21) | (s[2]! >>> 11)) >>> 0;
    s[2] = (s[2]! + t) >>> 0;
    return t;
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor((this.u32() / 2 ** 32) * n);
  }
  /** A bigint in [0, 2^bits). */
  bits(bits: number): bigint {
    let v = 0n;
    for (let i = 0; i < bits; i += 32) v = (v << 32n) | BigInt(this.u32());
    return v & ((1n << BigInt(bits)) - 1n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  chance(p: number): boolean {
    return this.u32() / 2 ** 32 < p;
  }
}
