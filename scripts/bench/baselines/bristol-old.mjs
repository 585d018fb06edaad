// Bristol Fashion -> the old ("Bristol") circuit format that emp-toolkit, and so emp-wasm, reads.
// Bench-only: it feeds the emp-wasm baseline our reference circuits.
//
// Old format, as emp-wasm's `bristolToBinary` accepts it (strictly):
//   <gates> <wires>
//   <n1> <n2> <n3>                  input bits of "party 1", of "party 2", output bits
//   <blank line>
//   2 1 a b c AND | 2 1 a b c XOR | 1 1 a c INV
// Inputs are wires 0..n1+n2-1, the n3 outputs are the LAST n3 wires. There are only two input
// fields and one output field, and no constants or copies. Our files keep the same wire layout
// (inputs first, outputs last, bit k of a value on its k-th wire), so the conversion is:
//   - the header: all input values concatenated into n1 + n2 bits (split given by the caller:
//     emp's 2-party mode reads n1 = party 0's bits, n2 = party 1's; its n-party mode only uses
//     n1 + n2 and takes the per-party split from `inputBitsPerParty`), outputs concatenated;
//   - MAND lines expanded to single ANDs;
//   - EQW (copy) removed by aliasing its output to its input; EQ (constant) built from input
//     wire 0 as XOR(w0, w0) = 0 and INV of that = 1. An output wire that is a copy or a
//     constant gets a real gate (INV of INV, or the constant's own gate), because in the old
//     format the outputs must be the last wires and written there;
//   - wires renumbered: inputs keep their numbers, every other written wire is numbered in
//     order of definition, and outputs are placed last in their order.
// No gate is reordered, so AND/XOR/INV counts are unchanged unless the circuit has EQ/EQW.

/**
 * Parses Bristol Fashion into a plain object. Checks the header counts, gate arity and that
 * every gate reads only wires already defined (inputs or earlier outputs).
 * @param {string} text
 * @returns {{ wires: number, inputs: number[], outputs: number[],
 *             gates: {op: 'AND'|'XOR'|'INV'|'EQ'|'EQW', a?: number, b?: number, v?: number, out: number}[] }}
 */
export function parseBristolFashion(text) {
  const lines = text.split(/\r?\n/);
  let ln = 0;
  const next = () => {
    while (ln < lines.length && lines[ln].trim() === '') ln++;
    if (ln >= lines.length) throw new Error('bristol: unexpected end of file');
    return { no: ln + 1, tok: lines[ln++].trim().split(/\s+/) };
  };
  const int = (s, where) => {
    if (!/^\d+$/.test(s)) throw new Error(`bristol: ${where}: expected a number, got "${s}"`);
    return Number(s);
  };
  const h1 = next();
  if (h1.tok.length !== 2) throw new Error('bristol: line 1 must be "<gates> <wires>"');
  const [nGates, wires] = h1.tok.map((t) => int(t, 'header'));
  const values = (what) => {
    const { no, tok } = next();
    const n = int(tok[0], `line ${no}`);
    if (tok.length !== n + 1) throw new Error(`bristol: line ${no}: ${n} ${what} widths announced, ${tok.length - 1} given`);
    return tok.slice(1).map((t) => int(t, `line ${no}`));
  };
  const inputs = values('input');
  const outputs = values('output');
  const inBits = inputs.reduce((s, w) => s + w, 0);
  const defined = new Uint8Array(wires);
  defined.fill(1, 0, inBits);
  const gates = [];
  const read = (w, no) => {
    if (!(w < wires) || !defined[w]) throw new Error(`bristol: line ${no}: wire ${w} read before it is written`);
    return w;
  };
  const write = (w, no) => {
    if (!(w < wires)) throw new Error(`bristol: line ${no}: wire ${w} out of range`);
    if (defined[w]) throw new Error(`bristol: line ${no}: wire ${w} written twice`);
    defined[w] = 1;
    return w;
  };
  let lineGates = 0;
  while (ln < lines.length) {
    if (lines[ln].trim() === '') {
      ln++;
      continue;
    }
    const { no, tok } = next();
    const nin = int(tok[0], `line ${no}`);
    const nout = int(tok[1], `line ${no}`);
    const op = tok[tok.length - 1];
    const w = tok.slice(2, -1).map((t) => int(t, `line ${no}`));
    if (w.length !== nin + nout) throw new Error(`bristol: line ${no}: ${nin}+${nout} wires announced, ${w.length} given`);
    const arity = (i, o) => {
      if (nin !== i || nout !== o) throw new Error(`bristol: line ${no}: ${op} takes ${i} in, ${o} out`);
    };
    lineGates++;
    switch (op) {
      case 'AND':
      case 'XOR':
        arity(2, 1);
        gates.push({ op, a: read(w[0], no), b: read(w[1], no), out: write(w[2], no) });
        break;
      case 'INV':
      case 'EQW':
        arity(1, 1);
        gates.push({ op, a: read(w[0], no), out: write(w[1], no) });
        break;
      case 'EQ':
        arity(1, 1);
        if (w[0] > 1) throw new Error(`bristol: line ${no}: EQ constant must be 0 or 1`);
        gates.push({ op, v: w[0], out: write(w[1], no) });
        break;
      case 'MAND': {
        const k = nout;
        if (nin !== 2 * k) throw new Error(`bristol: line ${no}: MAND with ${k} outputs takes ${2 * k} inputs`);
        for (let j = 0; j < k; j++) gates.push({ op: 'AND', a: read(w[j], no), b: read(w[k + j], no), out: write(w[2 * k + j], no) });
        break;
      }
      default:
        throw new Error(`bristol: line ${no}: unknown gate ${op}`);
    }
  }
  if (lineGates !== nGates) throw new Error(`bristol: header says ${nGates} gates, file has ${lineGates}`);
  const outBits = outputs.reduce((s, w) => s + w, 0);
  for (let x = wires - outBits; x < wires; x++) if (!defined[x]) throw new Error(`bristol: output wire ${x} never written`);
  return { wires, inputs, outputs, gates };
}

/**
 * Converts a parsed Bristol Fashion circuit to emp's old format.
 * @param {ReturnType<typeof parseBristolFashion>} c
 * @param {number} firstBits how many of the (concatenated) input bits go in the header's first
 *   field; the rest go in the second. Default: input value 0's width (emp '2pc': party 0 owns
 *   input value 0, party 1 the rest).
 * @returns {{ text: string, gates: number, wires: number, and: number, inputBits: number, outputBits: number }}
 */
export function toEmpBristol(c, firstBits = c.inputs[0] ?? 0) {
  const inBits = c.inputs.reduce((s, w) => s + w, 0);
  const outBits = c.outputs.reduce((s, w) => s + w, 0);
  if (inBits === 0) throw new Error('emp format: a circuit without inputs cannot build constants');
  if (firstBits < 0 || firstBits > inBits) throw new Error(`emp format: split ${firstBits} outside 0..${inBits}`);
  const firstOut = c.wires - outBits;
  const isOut = (w) => w >= firstOut;

  // Pass 1: resolve copies/constants to the source they stand for, and list the gates to emit
  // over symbolic wires: numbers < inBits are inputs, `{ id }` objects are internal values.
  /** @type {Map<number, object|number>} Bristol wire -> input wire number or internal value */
  const value = new Map();
  for (let w = 0; w < inBits; w++) value.set(w, w);
  const emitted = [];
  const fresh = () => ({ id: -1 });
  let zero;
  let one;
  const constant = (v) => {
    if (!zero) {
      zero = fresh();
      emitted.push({ op: 'XOR', a: 0, b: 0, out: zero });
    }
    if (v === 0) return zero;
    if (!one) {
      one = fresh();
      emitted.push({ op: 'INV', a: zero, out: one });
    }
    return one;
  };
  // An output wire must be written by its own gate (in the old format outputs are positional).
  const outSlot = new Map();
  const target = (w) => {
    if (!isOut(w)) return fresh();
    const s = { id: -1, output: w - firstOut };
    outSlot.set(w, s);
    return s;
  };
  for (const g of c.gates) {
    const src = (w) => value.get(w);
    switch (g.op) {
      case 'AND':
      case 'XOR':
      case 'INV': {
        const out = target(g.out);
        emitted.push({ op: g.op, a: src(g.a), b: g.op === 'INV' ? undefined : src(g.b), out });
        value.set(g.out, out);
        break;
      }
      case 'EQW':
      case 'EQ': {
        const s = g.op === 'EQW' ? src(g.a) : constant(g.v);
        if (!isOut(g.out)) {
          value.set(g.out, s);
          break;
        }
        // Copy into an output position: INV(INV(s)).
        const mid = fresh();
        emitted.push({ op: 'INV', a: s, out: mid });
        const out = target(g.out);
        emitted.push({ op: 'INV', a: mid, out });
        value.set(g.out, out);
        break;
      }
      default:
        throw new Error(`emp format: unexpected gate ${g.op}`);
    }
  }
  // An output wire that is an input wire directly cannot be expressed without a gate either.
  for (let w = firstOut; w < c.wires; w++) {
    if (outSlot.has(w)) continue;
    const s = value.get(w);
    const mid = fresh();
    emitted.push({ op: 'INV', a: s, out: mid });
    const out = { id: -1, output: w - firstOut };
    emitted.push({ op: 'INV', a: mid, out });
    outSlot.set(w, out);
  }

  // Pass 2: number internal values after the inputs, outputs last.
  let nextId = inBits;
  for (const e of emitted) if (e.out.output === undefined) e.out.id = nextId++;
  const wires = nextId + outBits;
  for (const e of emitted) if (e.out.output !== undefined) e.out.id = nextId + e.out.output;
  const num = (x) => (typeof x === 'number' ? x : x.id);
  let and = 0;
  const body = emitted.map((e) => {
    if (e.op === 'INV') return `1 1 ${num(e.a)} ${e.out.id} INV`;
    if (e.op === 'AND') and++;
    return `2 1 ${num(e.a)} ${num(e.b)} ${e.out.id} ${e.op}`;
  });
  const text = `${emitted.length} ${wires}\n${firstBits} ${inBits - firstBits} ${outBits}\n\n${body.join('\n')}\n`;
  return { text, gates: emitted.length, wires, and, inputBits: inBits, outputBits: outBits };
}

/**
 * The old-format circuit read back as Bristol Fashion with one input value per header field and
 * one output value: lets the project's own Bristol evaluator check a conversion.
 * @param {string} empText
 */
export function empToBristolFashion(empText) {
  const lines = empText.split('\n');
  const [n1, n2, n3] = lines[1].trim().split(/\s+/).map(Number);
  const ins = [n1, n2].filter((n) => n > 0);
  return [lines[0], `${ins.length} ${ins.join(' ')}`, `1 ${n3}`, ...lines.slice(2)].join('\n');
}
