// authgc with a streamed circuit through the SDK (garbling and evaluation interleave chunk by
// chunk): three parties, the binary encoding fed in small uneven pieces, against the reference
// evaluator; a party whose declared hash differs aborts the run (PARAMETER_MISMATCH).
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { init, WebmpcError, type StreamedCircuit } from '../../dist/index.js';
import { CircuitBuilder } from '../../dist/circuit/index.js';
import { rejection } from '../session/helpers.js';
import { bytes, expected, group, hex, reference } from './helpers.js';

beforeAll(async () => {
  await init();
});

/** `binary` streamed: a 64-byte prefix (the header fits), then pieces of 1, 2, 3, … 997 bytes. */
function streamed(binary: Uint8Array, hashOf: Uint8Array = binary): StreamedCircuit {
  const prefix = binary.subarray(0, 64);
  return {
    prefix,
    hash: new Uint8Array(createHash('sha256').update(hashOf).digest()),
    *pieces() {
      let at = 64;
      for (let k = 1; at < binary.length; k = (k % 997) + 1) {
        yield binary.subarray(at, at + k);
        at += k;
      }
    },
  };
}

describe('authgc: a streamed circuit through the SDK', () => {
  it('three parties, several chunks of gates, party 1 evaluates: the reference outputs; a wrong hash aborts', async () => {
    const b = new CircuitBuilder();
    const [x, y, z] = [0, 1, 2].map((p) => b.input(p, 32));
    let acc = x!;
    for (let i = 0; i < 20; i++) acc = acc.mul(y!).add(z!);
    b.output(acc);
    b.output(x!.lt(z!).toUInt());
    const binary = b.build().toBinary();
    const values = [0, 1, 2].map((p) => bytes(4, p + 40));
    const want = expected(reference(binary), values).map(hex);
    const g = await group(3);
    try {
      const outs = await Promise.all(g.sessions.map((s, p) => s.run(streamed(binary), { protocol: 'authgc', evaluator: 1, inputs: [values[p]!] })));
      for (const o of outs) expect(o.map(hex)).toEqual(want);
      // Party 2 declares the hash of another circuit (one byte longer) for the same bytes.
      const other = new Uint8Array([...binary, 0]);
      const runs = g.sessions.map((s, p) =>
        s.run(p === 2 ? streamed(binary, other) : streamed(binary), { protocol: 'authgc', evaluator: 1, inputs: [values[p]!] }),
      );
      const results = await Promise.all(runs.map(rejection));
      for (const r of results) expect(r.error).toBeInstanceOf(WebmpcError);
      expect(results.map((r) => r.error.code)).toContain('PARAMETER_MISMATCH');
    } finally {
      await g.close();
    }
  }, 120_000);
});
