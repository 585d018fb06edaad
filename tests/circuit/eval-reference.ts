// Test-only reference for circuits: parsers for webmpc's binary format and Bristol Fashion, and
// a plaintext evaluator. It is the independent check of the circuit builder (it shares no code
// with ts/circuit/), so it is deliberately plain: parse every field, validate every rule the
// formats state (each wire written once, operands written before they are read, outputs on the
// last wires), then evaluate gate by gate. Not shipped.
//
// Evaluation is bit-sliced: each wire holds a 32-bit word whose lane j is the wire's value in
// instance j, so one pass evaluates up to 32 input sets.

export type RefOp = 'XOR' | 'AND' | 'INV' | 'CONST' | 'COPY';

export interface RefGate {
  op: RefOp;
  /** Operand wires (none for CONST). */
  in: number[];
  out: number;
  /** CONST only. */
  value?: number;
}

export interface RefCircuit {
  wires: number;
  inputs: number[];
  outputs: number[];
  gates: RefGate[];
}

const OPS: Record<number, RefOp> = { 0: 'XOR', 1: 'AND', 2: 'INV', 3: 'CONST', 4: 'COPY' };

export function parseBinary(bytes: Uint8Array): RefCircuit {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const need = (n: number): void => {
    if (at + n > bytes.length) throw new Error(`binary circuit truncated at byte ${at}`);
  };
  const u8 = (): number => {
    need(1);
    return bytes[at++]!;
  };
  const u32 = (): number => {
    need(4);
    const v = view.getUint32(at, true);
    at += 4;
    return v;
  };
  const magic = String.fromCharCode(u8(), u8(), u8(), u8());
  if (magic !== 'WMPC') throw new Error(`bad magic ${magic}`);
  if (u8() !== 1) throw new Error('bad version');
  if (u8() !== 0 || u8() !== 0 || u8() !== 0) throw new Error('reserved bytes not zero');
  const wires = u32();
  need(8);
  const gateCount = Number(view.getBigUint64(at, true));
  at += 8;
  const inputs = Array.from({ length: u32() }, u32);
  const outputs = Array.from({ length: u32() }, u32);
  const gates: RefGate[] = [];
  for (let i = 0; i < gateCount; i++) {
    const code = u8();
    const op = OPS[code];
    if (op === undefined) throw new Error(`unknown opcode ${code}`);
    if (op === 'XOR' || op === 'AND') gates.push({ op, in: [u32(), u32()], out: u32() });
    else if (op === 'CONST') {
      const value = u8();
      gates.push({ op, in: [], value, out: u32() });
    } else gates.push({ op, in: [u32()], out: u32() });
  }
  if (at !== bytes.length) throw new Error(`${bytes.length - at} trailing bytes`);
  const c = { wires, inputs, outputs, gates };
  validate(c);
  return c;
}

export function parseBristol(text: string): RefCircuit {
  const lines = text.split('\n');
  const nums = (line: string | undefined): number[] =>
    (line ?? '')
      .trim()
      .split(/\s+/)
      .filter((t) => t !== '')
      .map(Number);
  const [gateCount, wires] = nums(lines[0]) as [number, number];
  const [nIn, ...inputs] = nums(lines[1]);
  const [nOut, ...outputs] = nums(lines[2]);
  if (inputs.length !== nIn || outputs.length !== nOut) throw new Error('bad Bristol header');
  const gates: RefGate[] = [];
  for (const line of lines.slice(3)) {
    const t = line.trim().split(/\s+/);
    if (t.length < 2) continue;
    const kind = t[t.length - 1]!;
    const f = t.slice(0, -1).map(Number);
    const nI = f[0]!;
    const ins = f.slice(2, 2 + nI);
    const out = f[2 + nI]!;
    switch (kind) {
      case 'XOR':
      case 'AND':
        gates.push({ op: kind, in: ins, out });
        break;
      case 'INV':
        gates.push({ op: 'INV', in: ins, out });
        break;
      case 'EQ':
        gates.push({ op: 'CONST', in: [], value: ins[0]!, out });
        break;
      case 'EQW':
        gates.push({ op: 'COPY', in: ins, out });
        break;
      case 'MAND': {
        const k = f[1]!;
        for (let j = 0; j < k; j++) gates.push({ op: 'AND', in: [f[2 + j]!, f[2 + k + j]!], out: f[2 + 2 * k + j]! });
        break;
      }
      default:
        throw new Error(`unknown Bristol gate ${kind}`);
    }
  }
  if (gates.length !== gateCount && !text.includes('MAND')) throw new Error('Bristol gate count mismatch');
  const c = { wires, inputs, outputs, gates };
  validate(c);
  return c;
}

function validate(c: RefCircuit): void {
  const nIn = c.inputs.reduce((s, w) => s + w, 0);
  const nOut = c.outputs.reduce((s, w) => s + w, 0);
  if (nIn + nOut > c.wires) throw new Error('fewer wires than inputs and outputs');
  const written = new Uint8Array(c.wires);
  written.fill(1, 0, nIn);
  for (const g of c.gates) {
    for (const w of g.in) {
      if (!(w < c.wires) || written[w] !== 1) throw new Error(`wire ${w} read before it is written`);
    }
    if (!(g.out < c.wires)) throw new Error(`wire ${g.out} out of range`);
    if (written[g.out] === 1) throw new Error(`wire ${g.out} written twice`);
    if (g.op === 'CONST' && g.value !== 0 && g.value !== 1) throw new Error('constant not 0/1');
    written[g.out] = 1;
  }
  for (let w = c.wires - nOut; w < c.wires; w++) if (written[w] !== 1) throw new Error(`output wire ${w} never written`);
}

/** Evaluates up to 32 instances at once; `inputs[j]` is instance j's input values. */
export function evaluateBatch(c: RefCircuit, inputs: readonly (readonly bigint[])[]): bigint[][] {
  const lanes = inputs.length;
  if (lanes < 1 || lanes > 32) throw new Error('1..32 instances per batch');
  const w = new Int32Array(c.wires);
  let base = 0;
  c.inputs.forEach((width, v) => {
    for (let j = 0; j < lanes; j++) {
      const x = inputs[j]![v];
      if (x === undefined) throw new Error(`missing input ${v}`);
      if (x < 0n || x >> BigInt(width) !== 0n) throw new Error(`input ${v} does not fit ${width} bits`);
      for (let k = 0; k < width; k++) if ((x >> BigInt(k)) & 1n) w[base + k]! |= 1 << j;
    }
    base += width;
  });
  for (const g of c.gates) {
    const a = g.in[0]!;
    switch (g.op) {
      case 'XOR':
        w[g.out] = w[a]! ^ w[g.in[1]!]!;
        break;
      case 'AND':
        w[g.out] = w[a]! & w[g.in[1]!]!;
        break;
      case 'INV':
        w[g.out] = ~w[a]!;
        break;
      case 'CONST':
        w[g.out] = g.value === 1 ? -1 : 0;
        break;
      case 'COPY':
        w[g.out] = w[a]!;
    }
  }
  const nOut = c.outputs.reduce((s, x) => s + x, 0);
  const results: bigint[][] = [];
  for (let j = 0; j < lanes; j++) {
    const vals: bigint[] = [];
    let at = c.wires - nOut;
    for (const width of c.outputs) {
      let v = 0n;
      for (let k = width - 1; k >= 0; k--) v = (v << 1n) | BigInt((w[at + k]! >>> j) & 1);
      vals.push(v);
      at += width;
    }
    results.push(vals);
  }
  return results;
}

/** Evaluates any number of instances, 32 at a time. */
export function evaluateMany(c: RefCircuit, inputs: readonly (readonly bigint[])[]): bigint[][] {
  const out: bigint[][] = [];
  for (let i = 0; i < inputs.length; i += 32) out.push(...evaluateBatch(c, inputs.slice(i, i + 32)));
  return out;
}

export function evaluate(c: RefCircuit, inputs: readonly bigint[]): bigint[] {
  return evaluateBatch(c, [inputs])[0]!;
}

export function countOps(c: RefCircuit): Record<RefOp, number> {
  const n: Record<RefOp, number> = { XOR: 0, AND: 0, INV: 0, CONST: 0, COPY: 0 };
  for (const g of c.gates) n[g.op]++;
  return n;
}

/** A byte string as the big-endian integer the circuits' bit order uses. */
export function bytesToBig(b: Uint8Array): bigint {
  let v = 0n;
  for (const x of b) v = (v << 8n) | BigInt(x);
  return v;
}

export function bigToBytes(v: bigint, length: number): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = length - 1; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}
