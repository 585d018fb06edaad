// The circuit crate through the SDK (dist/, the real .wasm): the reference circuits from
// ../shared/circuits/bristol_fashion/ give their known answers, arithmetic matches BigInt, and
// bad circuits or inputs are CircuitErrors with stable codes and no input bytes in the message.
import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { init, WebmpcError } from '../../dist/index.js';
import { BinaryCircuit, CircuitError, evaluate, parseBristol } from '../../dist/circuit/wasm.js';
import { DIST, referenceCircuit } from '../helpers.js';

const text = referenceCircuit;
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const unhex = (s: string) => new Uint8Array(Buffer.from(s.replace(/\s+/g, ''), 'hex'));

const be64 = (x: bigint) => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt.asUintN(64, x));
  return b;
};
const u64 = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength).getBigUint64(0);
const random64 = () => u64(new Uint8Array(randomBytes(8)));

let circuits: Record<string, BinaryCircuit>;

beforeAll(async () => {
  await init();
  circuits = Object.fromEntries(
    ['aes_128', 'sha256', 'adder64', 'sub64', 'mult64', 'neg64', 'zero_equal'].map((n) => [n, parseBristol(text(`${n}.txt`))]),
  );
});

/** Asserts `f` throws a CircuitError with `code` and returns it. */
function circuitError(f: () => unknown, code: string): CircuitError {
  let caught: unknown;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(CircuitError);
  expect(caught).toBeInstanceOf(WebmpcError);
  const e = caught as CircuitError;
  expect(e.name).toBe('CircuitError');
  expect(e.code).toBe(code);
  return e;
}

describe('known answers', () => {
  it('AES-128: FIPS-197 C.1 and the all-zero vector', () => {
    const aes = circuits.aes_128!;
    const [ct] = evaluate(aes, [unhex('000102030405060708090a0b0c0d0e0f'), unhex('00112233445566778899aabbccddeeff')]);
    expect(hex(ct!)).toBe('69c4e0d86a7b0430d8cdb78070b4c55a');
    expect(hex(evaluate(aes, [new Uint8Array(16), new Uint8Array(16)])[0]!)).toBe('66e94bd4ef8a2c3b884cfa59ca342b2e');
  });

  it('SHA-256 of "abc" (one compression from the IV)', () => {
    const block = new Uint8Array(64);
    block.set([0x61, 0x62, 0x63, 0x80]);
    block[63] = 24;
    const iv = unhex('6a09e667 bb67ae85 3c6ef372 a54ff53a 510e527f 9b05688c 1f83d9ab 5be0cd19');
    const [digest] = evaluate(circuits.sha256!, [block, iv]);
    expect(hex(digest!)).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hex(digest!)).toBe(createHash('sha256').update('abc').digest('hex'));
  });

  it('64-bit arithmetic matches BigInt on random and edge inputs', () => {
    const edges = [0n, 1n, (1n << 63n) - 1n, 1n << 63n, (1n << 64n) - 1n];
    const samples = [...edges.flatMap((a) => edges.map((b) => [a, b] as const)), ...Array.from({ length: 200 }, () => [random64(), random64()] as const)];
    const mod = (x: bigint) => BigInt.asUintN(64, x);
    for (const [a, b] of samples) {
      const two = [be64(a), be64(b)];
      expect(u64(evaluate(circuits.adder64!, two)[0]!)).toBe(mod(a + b));
      expect(u64(evaluate(circuits.sub64!, two)[0]!)).toBe(mod(a - b));
      expect(u64(evaluate(circuits.mult64!, two)[0]!)).toBe(mod(a * b));
      expect(u64(evaluate(circuits.neg64!, [be64(a)])[0]!)).toBe(mod(-a));
      expect(Array.from(evaluate(circuits.zero_equal!, [be64(a)])[0]!)).toEqual([a === 0n ? 1 : 0]);
    }
  });

  it('stats match the README', () => {
    const and = { aes_128: 6400, sha256: 22573, adder64: 63, sub64: 63, mult64: 4033, neg64: 62, zero_equal: 63 };
    for (const [name, count] of Object.entries(and)) expect(circuits[name]!.stats.and, name).toBe(count);
    const aes = circuits.aes_128!.stats;
    expect([aes.wires, aes.gates, aes.inputs, aes.outputs]).toEqual([36919, 36663, 256, 128]);
    expect(aes.inputWidths).toEqual([128, 128]);
    expect(aes.outputWidths).toEqual([128]);
    expect(aes.and + aes.xor + aes.inv + aes.constants + aes.copies).toBe(aes.gates);
    const sha = circuits.sha256!.stats;
    expect([sha.wires, sha.gates]).toEqual([135841, 135073]);
    expect(circuits.neg64!.stats.copies).toBe(1);
    expect(circuits.adder64!.stats.depth).toBe(63);
  });
});

describe('binary form and hash', () => {
  it('hash is SHA-256 of the binary form, stable, and differs between circuits', () => {
    const seen = new Set<string>();
    for (const [name, c] of Object.entries(circuits)) {
      const h = c.hash;
      expect(h.length).toBe(32);
      expect(hex(h), name).toBe(createHash('sha256').update(c.binary).digest('hex'));
      expect(hex(parseBristol(text(`${name}.txt`)).hash)).toBe(hex(h));
      seen.add(hex(h));
    }
    expect(seen.size).toBe(Object.keys(circuits).length);
  });

  it('round trips through Bristol text and the binary form', () => {
    for (const c of Object.values(circuits)) {
      expect(hex(parseBristol(c.toBristol()).hash)).toBe(hex(c.hash));
      expect(hex(BinaryCircuit.fromBinary(c.toBinary()).hash)).toBe(hex(c.hash));
    }
    const b = circuits.adder64!.binary;
    expect(Array.from(b.subarray(0, 8))).toEqual([0x57, 0x4d, 0x50, 0x43, 1, 0, 0, 0]);
  });

  it('is immutable: accessors hand out copies', () => {
    const c = parseBristol(text('adder64.txt'));
    const before = hex(c.hash);
    c.binary.fill(0);
    c.hash.fill(0);
    expect(hex(c.hash)).toBe(before);
    expect(Object.isFrozen(c.stats)).toBe(true);
  });

  it('evaluates anything with toBinary()', () => {
    const c = circuits.adder64!;
    const [sum] = evaluate({ toBinary: () => c.binary }, [be64(40n), be64(2n)]);
    expect(u64(sum!)).toBe(42n);
  });
});

describe('errors', () => {
  it('malformed Bristol text names the line', () => {
    const cases: [string, string, number][] = [
      ['1 3\n2 1 1\n1 1\n\n2 1 0 5 2 XOR\n', 'MALFORMED_CIRCUIT', 5],
      ['2 4\n2 1 1\n1 1\n\n2 1 0 3 2 AND\n2 1 0 2 3 XOR\n', 'MALFORMED_CIRCUIT', 5],
      ['1 3\n2 1 1\n1 1\n\n2 1 0 1 2 NAND\n', 'MALFORMED_CIRCUIT', 5],
      ['1 3\n2 1 1\n1 1\n\n2 1 0 1 2 XOR\nmore\n', 'MALFORMED_CIRCUIT', 6],
      ['4000000000 4000000000\n2 1 1\n1 1\n', 'CIRCUIT_TOO_LARGE', 1],
    ];
    for (const [t, code, line] of cases) {
      const e = circuitError(() => parseBristol(t), code);
      expect(e.line).toBe(line);
      expect(e.message).toContain(`line ${line}`);
    }
  });

  it('malformed binary names the byte offset', () => {
    const good = circuits.adder64!.binary;
    expect(circuitError(() => BinaryCircuit.fromBinary(good.subarray(0, good.length - 1)), 'MALFORMED_CIRCUIT').offset).toBeTypeOf('number');
    const bad = good.slice();
    bad[4] = 9;
    circuitError(() => BinaryCircuit.fromBinary(bad), 'MALFORMED_CIRCUIT');
    const huge = good.slice();
    huge.set([0xff, 0xff, 0xff, 0xff], 8);
    expect(circuitError(() => BinaryCircuit.fromBinary(huge), 'CIRCUIT_TOO_LARGE').offset).toBe(8);
    circuitError(() => BinaryCircuit.fromBinary(new Uint8Array(randomBytes(100))), 'MALFORMED_CIRCUIT');
    circuitError(() => evaluate({ toBinary: () => new Uint8Array(3) }, []), 'MALFORMED_CIRCUIT');
  });

  it('wrong inputs are WRONG_INPUT_SIZE, and messages carry no input bytes', () => {
    const secret = unhex('deadbeefcafef00d77');
    const c = circuits.adder64!;
    const msgs = [
      circuitError(() => evaluate(c, [secret]), 'WRONG_INPUT_SIZE').message,
      circuitError(() => evaluate(c, [secret, be64(1n)]), 'WRONG_INPUT_SIZE').message,
      // A 3-bit input whose byte has bits above the width set: refused by the Rust side.
      circuitError(() => evaluate(parseBristol('1 4\n1 3\n1 1\n\n2 1 0 1 3 AND\n'), [unhex('ad')]), 'WRONG_INPUT_SIZE').message,
    ];
    for (const m of msgs) {
      for (const leak of ['dead', 'beef', 'cafe', 'f00d', '222', '173', 'ad,']) expect(m).not.toContain(leak);
    }
  });

  it('argument types are checked before Wasm', () => {
    expect(() => parseBristol(42 as unknown as string)).toThrow(TypeError);
    expect(() => evaluate(circuits.adder64!, 'x' as unknown as Uint8Array[])).toThrow(TypeError);
    expect(() => evaluate(circuits.adder64!, [be64(1n), [0, 0] as unknown as Uint8Array])).toThrow(TypeError);
    expect(() => evaluate(null as unknown as BinaryCircuit, [])).toThrow(TypeError);
    expect(() => BinaryCircuit.fromBinary('x' as unknown as Uint8Array)).toThrow(TypeError);
  });

  it('the module keeps working after errors', () => {
    for (let i = 0; i < 50; i++) {
      try {
        BinaryCircuit.fromBinary(new Uint8Array(randomBytes(64)));
      } catch (e) {
        expect(e).toBeInstanceOf(CircuitError);
      }
      try {
        parseBristol(Buffer.from(randomBytes(64)).toString('latin1'));
      } catch (e) {
        expect(e).toBeInstanceOf(CircuitError);
      }
    }
    expect(u64(evaluate(circuits.adder64!, [be64(1n), be64(2n)])[0]!)).toBe(3n);
  });
});

describe('secrets in Wasm memory', () => {
  it('evaluation leaves no copy of its inputs or outputs in linear memory', async () => {
    // A private instance of the raw bindings, so the scan sees exactly this module's memory.
    const gen = join(DIST, 'wasm-gen');
    const raw = (await import(join(gen, 'webmpc.js'))) as typeof import('../../dist/wasm-gen/webmpc.js');
    const { memory } = await raw.default({ module_or_path: await readFile(join(gen, 'webmpc_bg.wasm')) });
    const binary = circuits.aes_128!.binary;
    const key = new Uint8Array(randomBytes(16));
    const pt = new Uint8Array(randomBytes(16));
    const [ct] = raw.circuitEvaluate(binary, [key, pt]) as Uint8Array[];
    expect(ct!.length).toBe(16);
    // The evaluator holds one byte per bit, so also look for the inputs in that form.
    const asBits = (b: Uint8Array) => Uint8Array.from({ length: 128 }, (_, k) => (b[15 - (k >> 3)]! >> (k & 7)) & 1);
    const hay = Buffer.from(memory.buffer);
    for (const needle of [key, pt, ct!, asBits(key), asBits(pt), asBits(ct!)]) {
      expect(hay.indexOf(needle)).toBe(-1);
    }
  });
});
