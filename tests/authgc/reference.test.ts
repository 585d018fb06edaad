// authgc through session.run against the independent reference evaluator: every reference
// circuit of ../shared/circuits for 2, 3 and 4 parties over in-memory transports, one session
// group per party count (so later runs reuse the setup), with the evaluator and the inputs'
// owners rotating over the parties, pseudo-random inputs, and every party checked.
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from '../../dist/index.js';
import { referenceCircuit } from '../helpers.js';
import { bytes, expected, group, hex, mine, reference } from './helpers.js';

const FILES = ['adder64.txt', 'sub64.txt', 'neg64.txt', 'zero_equal.txt', 'mult64.txt', 'aes_128.txt', 'sha256.txt'];

beforeAll(async () => {
  await init();
});

async function everyReferenceCircuit(n: number): Promise<void> {
  const g = await group(n);
  try {
    for (const [k, file] of FILES.entries()) {
      const text = referenceCircuit(file);
      const ref = reference(text);
      const evaluator = (k + n - 1) % n;
      const owners = ref.inputs.map((_, i) => (k + i) % n);
      const values = ref.inputs.map((w, i) => bytes(Math.ceil(w / 8), 100 * n + 10 * k + i));
      const want = expected(ref, values).map(hex);
      const outs = await Promise.all(
        g.sessions.map((s, p) => s.run(text, { protocol: 'authgc', evaluator, owners, inputs: mine(owners, values, p) })),
      );
      for (const [p, out] of outs.entries()) expect(out.map(hex), `${file}, n = ${n}, party ${p}, evaluator ${evaluator}`).toEqual(want);
    }
  } finally {
    await g.close();
  }
}

describe('authgc: every reference circuit against the reference evaluator', () => {
  it('2 parties', () => everyReferenceCircuit(2), 300_000);
  it('3 parties', () => everyReferenceCircuit(3), 300_000);
  it('4 parties', () => everyReferenceCircuit(4), 300_000);
});
