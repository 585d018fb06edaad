// Untrusted circuits through the built Wasm module, as an application would hand them over:
// generated binary circuits (mostly valid, each with one mutation: a huge or inconsistent count,
// a bad wire or opcode, a cut, extra bytes) go through every circuit entry point of the SDK and
// through Yao 2PC, from a prepared circuit and as a stream cut differently by the two parties.
// Each must give a result equal to plaintext evaluation or a typed WebmpcError, never a trap —
// and the module must still work afterwards. The issue's 63-byte circuit with 2^27 + 1 wires,
// which used to kill the process in yao2pc, is the first case.
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { aesEncrypt, createMemoryTransports, init, session, WebmpcError, type Session, type StreamedCircuit } from '../../dist/index.js';
import { BinaryCircuit, evaluate, parseBristol } from '../../dist/circuit/index.js';
import type { Transport } from '../../dist/net/transport.js';
import { hex, nodeAes, rand } from '../helpers.js';

beforeAll(async () => {
  await init();
});

/** A small deterministic PRNG (xorshift32), so a failing case can be reproduced from its seed. */
function prng(seed: number): (n: number) => number {
  let s = seed >>> 0 || 1;
  return (n: number) => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s % n;
  };
}

interface RawGate {
  op: number;
  a: number;
  b: number;
  out: number;
}

interface Case {
  wires: number;
  inputs: number[];
  outputs: number[];
  declared: bigint;
  gates: RawGate[];
  tail: number;
  cut: number;
}

const CAP = 2 ** 25; // webmpc_circuit::MAX_WIRES
const BIG = [0, 1, 7, CAP - 1, CAP, CAP + 1, 2 ** 26, 2 ** 27 + 1, 2 ** 31, 2 ** 32 - 1];

/** A valid random circuit (inputs of 1–8 bits, gates reading earlier wires, some overwriting). */
function valid(r: (n: number) => number): Case {
  const inputs = [1 + r(8), 1 + r(8)];
  const nIn = inputs[0]! + inputs[1]!;
  let wires = nIn;
  const gates: RawGate[] = [];
  for (let k = r(30); k > 0; k--) {
    const op = r(5);
    const overwrite = r(4) === 0 && wires > nIn;
    const out = overwrite ? nIn + r(wires - nIn) : wires;
    gates.push({ op, a: op === 3 ? r(2) : r(wires), b: r(wires), out });
    if (out === wires) wires++;
  }
  const nOut = 1 + r(4);
  for (let k = 0; k < nOut; k++) gates.push({ op: 4, a: r(wires), b: 0, out: wires + k });
  return { wires: wires + nOut, inputs, outputs: [nOut], declared: BigInt(gates.length), gates, tail: 0, cut: 0 };
}

function mutate(c: Case, r: (n: number) => number): Case {
  const big = () => BIG[r(BIG.length)]!;
  switch (r(10)) {
    case 0:
    case 1:
      break;
    case 2:
      c.wires = big();
      break;
    case 3:
      c.inputs[r(2)] = big();
      break;
    case 4:
      c.outputs[0] = big();
      break;
    case 5:
      c.declared = [c.declared + 1n, c.declared - 1n, 2n ** 40n, 2n ** 64n - 1n][r(4)]!;
      break;
    case 6: {
      const g = c.gates[r(c.gates.length)]!;
      g[(['a', 'b', 'out'] as const)[r(3)]!] = big();
      break;
    }
    case 7:
      c.gates[r(c.gates.length)]!.op = 5 + r(250);
      break;
    case 8:
      if (r(2)) c.cut = 1 + r(12);
      else c.tail = 1 + r(12);
      break;
    default:
      // Consistent but above the cap: the input widths claim the wires (the issue's circuit has
      // this form).
      c.wires = [CAP + 1, 2 ** 26, 2 ** 27 + 1, 2 ** 31, 2 ** 32 - 1][r(5)]!;
      c.inputs = [c.wires - c.gates.length, 0];
      break;
  }
  return c;
}

function encode(c: Case): Uint8Array {
  const bytes: number[] = [0x57, 0x4d, 0x50, 0x43, 1, 0, 0, 0];
  const u32 = (v: number) => bytes.push(v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff);
  u32(c.wires);
  u32(Number(c.declared & 0xffffffffn));
  u32(Number(c.declared >> 32n));
  for (const widths of [c.inputs, c.outputs]) {
    u32(widths.length);
    widths.forEach(u32);
  }
  for (const g of c.gates) {
    bytes.push(g.op & 0xff);
    if (g.op === 3) {
      bytes.push(g.a & 0xff);
      u32(g.out);
    } else if (g.op === 2 || g.op === 4) {
      u32(g.a);
      u32(g.out);
    } else {
      u32(g.a);
      u32(g.b);
      u32(g.out);
    }
  }
  for (let k = 0; k < c.tail; k++) bytes.push(0xab);
  return Uint8Array.from(bytes.slice(0, bytes.length - c.cut));
}

/** The issue's circuit: 63 bytes, 2^27 + 1 wires, inputs of 2^26 bits each, an AND and a constant. */
function issueCircuit(): Uint8Array {
  const c = encode({
    wires: 2 ** 27 + 1,
    inputs: [2 ** 26, 2 ** 26],
    outputs: [1, 1],
    declared: 2n,
    gates: [
      { op: 1, a: 0, b: 2 ** 26, out: 2 ** 27 },
      { op: 3, a: 1, b: 0, out: 2 ** 27 - 1 },
    ],
    tail: 0,
    cut: 0,
  });
  expect(c.length).toBe(63);
  return c;
}

/** Runs `f`; returns its value, or the error after checking it is typed and not a trap. */
function typed<T>(what: string, f: () => T): T | WebmpcError {
  try {
    return f();
  } catch (err) {
    expect(err, `${what}: ${String(err)}`).toBeInstanceOf(WebmpcError);
    expect((err as WebmpcError).code, what).not.toBe('WASM_TRAP');
    return err as WebmpcError;
  }
}

async function typedAsync<T>(what: string, p: Promise<T>): Promise<T | WebmpcError> {
  try {
    return await p;
  } catch (err) {
    expect(err, `${what}: ${String(err)}`).toBeInstanceOf(WebmpcError);
    expect((err as WebmpcError).code, what).not.toBe('WASM_TRAP');
    return err as WebmpcError;
  }
}

const value = (width: number, r: (n: number) => number) => {
  const v = Uint8Array.from({ length: Math.ceil(width / 8) }, () => r(256));
  if (width % 8) v[0]! &= (1 << width % 8) - 1;
  return v;
};

/** Two sessions over fresh in-memory transports, closed together as soon as either run fails. */
async function pair(): Promise<{ s: [Session, Session]; t: [Transport, Transport] }> {
  const t = createMemoryTransports(2, { recvTimeoutMs: 20_000 }) as [Transport, Transport];
  const s = (await Promise.all([session({ transport: t[0], party: 0, parties: 2 }), session({ transport: t[1], party: 1, parties: 2 })])) as [
    Session,
    Session,
  ];
  return { s, t };
}

async function both<T>(t: [Transport, Transport], runs: [Promise<T>, Promise<T>]): Promise<(T | WebmpcError)[]> {
  // A party that stops (typed error) must not leave its peer waiting out a timeout.
  const closeOnError = (p: Promise<T>) =>
    p.catch(async (err) => {
      await Promise.all(t.map((x) => x.close()));
      throw err;
    });
  return Promise.all(runs.map((p, i) => typedAsync(`yao2pc party ${i}`, closeOnError(p))));
}

function streamed(bytes: Uint8Array, split: number, piece: number): StreamedCircuit {
  const cut = Math.min(Math.max(split, 0), bytes.length);
  return {
    prefix: bytes.subarray(0, cut),
    hash: new Uint8Array(createHash('sha256').update(bytes).digest()),
    *pieces() {
      for (let at = cut; at < bytes.length; at += piece) yield bytes.subarray(at, Math.min(bytes.length, at + piece));
    },
  };
}

/** The module still computes: AES against OpenSSL, and a small 2PC. */
async function stillWorks(): Promise<void> {
  const key = rand(16);
  const pt = rand(64);
  expect(hex(aesEncrypt(key, pt))).toBe(hex(nodeAes(key, pt)));
  const { s, t } = await pair();
  const add = parseBristol('1 3\n2 1 1\n1 1\n\n2 1 0 1 2 XOR\n');
  const out = await both(t, [s[0].run(add, { inputs: [new Uint8Array([1])] }), s[1].run(add, { inputs: [new Uint8Array([0])] })]);
  expect(out.map((o) => hex((o as Uint8Array[])[0]!))).toEqual(['01', '01']);
  await Promise.all(t.map((x) => x.close()));
}

describe('untrusted circuits through the Wasm module', () => {
  it('the 63-byte circuit with 2^27 + 1 wires is a typed CIRCUIT_TOO_LARGE everywhere, not a trap', async () => {
    const bytes = issueCircuit();
    const refusals = [
      typed('BinaryCircuit.fromBinary', () => BinaryCircuit.fromBinary(bytes)),
      typed('evaluate', () => evaluate({ toBinary: () => bytes }, [new Uint8Array(2 ** 23), new Uint8Array(2 ** 23)])),
    ];
    for (const err of refusals) expect((err as WebmpcError).code).toBe('CIRCUIT_TOO_LARGE');
    // In yao2pc, prepared and streamed: both parties refuse before any message.
    const inputs = (p: number) => ({ inputs: [new Uint8Array(2 ** 23).fill(p)] });
    for (const circuit of [bytes, streamed(bytes, bytes.length, 1), streamed(bytes, 40, 7)]) {
      const { s, t } = await pair();
      const out = await both(t, [s[0].run(circuit, inputs(1)), s[1].run(circuit, inputs(2))]);
      for (const o of out) expect((o as WebmpcError).code).toBe('CIRCUIT_TOO_LARGE');
      await Promise.all(t.map((x) => x.close()));
    }
    await stillWorks();
  });

  it('generated circuits give results equal to plaintext evaluation, or typed errors', async () => {
    const outcomes = { ran: 0, refused: 0 };
    let sessions = await pair();
    for (let seed = 1; seed <= 60; seed++) {
      const r = prng(seed * 2654435761);
      const c = mutate(valid(r), r);
      const bytes = encode(c);
      const what = `case ${seed}`;
      const circuit = typed(`${what}: fromBinary`, () => BinaryCircuit.fromBinary(bytes));
      if (circuit instanceof WebmpcError) {
        outcomes.refused++;
        // Every other way in refuses it too, typed.
        typed(`${what}: parseBristol of the same header`, () => parseBristol(`${c.declared} ${c.wires}\n2 ${c.inputs.join(' ')}\n1 ${c.outputs[0]}\n\n`));
        const out = await both(sessions.t, [sessions.s[0].run(bytes, { inputs: [new Uint8Array(1)] }), sessions.s[1].run(bytes, { inputs: [new Uint8Array(1)] })]);
        for (const o of out) expect(o, what).toBeInstanceOf(WebmpcError);
        // `both` closed the transports when the runs failed: the next case gets fresh sessions.
        sessions = await pair();
        continue;
      }
      outcomes.ran++;
      const stats = circuit.stats;
      expect(hex(circuit.hash), what).toBe(hex(new Uint8Array(createHash('sha256').update(bytes).digest())));
      // Back through Bristol text (refused, typed, when the circuit overwrites wires).
      const back = typed(`${what}: Bristol round trip`, () => parseBristol(circuit.toBristol()));
      if (!(back instanceof WebmpcError)) expect(back.stats.gates, what).toBe(stats.gates);
      const values = stats.inputWidths.map((w) => value(w, r));
      const want = evaluate(circuit, values);
      // Party p owns input p; both learn every output. Prepared, then streamed with each party
      // cutting the stream differently.
      // (A stream's prefix must hold the header: 40 bytes for two inputs and one output.)
      for (const source of [bytes, streamed(bytes, 40 + r(30), 1 + r(20))]) {
        const other = source instanceof Uint8Array ? source : streamed(bytes, bytes.length, 3 + r(30));
        const out = await both(sessions.t, [sessions.s[0].run(source, { inputs: [values[0]!] }), sessions.s[1].run(other, { inputs: [values[1]!] })]);
        for (const o of out) expect((o as Uint8Array[]).map(hex), what).toEqual(want.map(hex));
      }
    }
    expect(outcomes.ran).toBeGreaterThan(10);
    expect(outcomes.refused).toBeGreaterThan(10);
    await Promise.all(sessions.t.map((x) => x.close()));
    await stillWorks();
  }, 120_000);
});
