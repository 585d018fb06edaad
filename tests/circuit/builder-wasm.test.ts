// The builder's output through the Rust circuit crate (the Wasm bindings' circuitEvaluate,
// circuitFromBristol and circuitStats): the Rust decoder must accept the binary and the Bristol
// text the builder writes, count the same gates, and evaluate to what the test-only reference
// evaluator computes. Skipped while the built Wasm module has no circuit bindings yet.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { CircuitBuilder, type Circuit } from '../../dist/circuit/builder.js';
import { aes128Circuit } from '../../dist/circuit/gen/aes128.js';
import { sha256Circuit } from '../../dist/circuit/gen/sha256.js';
import { DIST } from '../helpers.js';
import { bigToBytes, bytesToBig, evaluateMany, parseBinary } from './eval-reference.js';

interface CircuitBindings {
  default: (opts: { module_or_path: Uint8Array }) => Promise<unknown>;
  circuitEvaluate: (binary: Uint8Array, inputs: Uint8Array[]) => Uint8Array[];
  circuitFromBristol: (text: string) => Uint8Array;
  circuitStats: (binary: Uint8Array) => { and: number; wires: number; gates: number; inputWidths: number[]; outputWidths: number[] };
}

const gen = join(DIST, 'wasm-gen');
const raw = (await import(join(gen, 'webmpc.js'))) as Partial<CircuitBindings>;
describe('builder circuits in the Rust circuit crate', () => {
  let w: CircuitBindings;
  beforeAll(async () => {
    w = raw as CircuitBindings;
    await w.default({ module_or_path: await readFile(join(gen, 'webmpc_bg.wasm')) });
  });

  const randomInputs = (widths: readonly number[], n: number): bigint[][] =>
    Array.from({ length: n }, () =>
      widths.map((width) => BigInt.asUintN(width, bytesToBig(randomBytes(Math.ceil(width / 8))))),
    );

  /** Rust evaluation of `binary` on the values, through its byte encoding. */
  const wasmEval = (binary: Uint8Array, widths: readonly number[], outWidths: readonly number[], values: bigint[]): bigint[] =>
    w
      .circuitEvaluate(
        binary,
        values.map((v, i) => bigToBytes(v, Math.ceil(widths[i]! / 8))),
      )
      .map((bytes, i) => {
        expect(bytes.length).toBe(Math.ceil(outWidths[i]! / 8));
        return bytesToBig(bytes);
      });

  function crossCheck(c: Circuit, samples: number): void {
    const binary = c.toBinary();
    const stats = w.circuitStats(binary);
    expect(stats.and).toBe(c.andCount);
    expect(stats.gates).toBe(c.gateCount);
    expect(stats.wires).toBe(c.wireCount);
    expect(stats.inputWidths).toEqual(c.inputWidths);
    expect(stats.outputWidths).toEqual(c.outputWidths);
    const fromBristol = w.circuitFromBristol(c.toBristol());
    const inputs = randomInputs(c.inputWidths, samples);
    const expected = evaluateMany(parseBinary(binary), inputs);
    inputs.forEach((values, i) => {
      expect(wasmEval(binary, c.inputWidths, c.outputWidths, values)).toEqual(expected[i]);
      expect(wasmEval(fromBristol, c.inputWidths, c.outputWidths, values)).toEqual(expected[i]);
    });
  }

  it('AES-128', () => crossCheck(aes128Circuit(), 8));
  it('SHA-256 compression', () => crossCheck(sha256Circuit(), 4));

  it('a mix of operations, odd widths, constant/copied/negated outputs', () => {
    const b = new CircuitBuilder();
    const x = b.input(0, 13);
    const y = b.input(1, 13);
    const s = b.inputSigned(0, 7);
    const sel = b.inputBit(1);
    b.output(x.mul(y).add(x.sub(y)));
    b.output(b.mux(sel, x.min(y), x.max(y)));
    b.output(s.lt(-3));
    b.output(b.select([x, y, x.xor(y)], y.slice(0, 2)));
    b.output(b.constant(0b101, 3));
    b.output(x);
    b.output(x.not());
    crossCheck(b.build(), 32);
  });
});
