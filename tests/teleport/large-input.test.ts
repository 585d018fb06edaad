// Large messages are delivered (issue 17, item 9): in malicious mode the enclave's input labels
// and σ's take 16 + 128 bytes per evaluator input bit, so a 120,000-bit evaluator input makes
// 17 MB — more than one enclave-program frame (16 MiB) or the Open Enclave host's buffer (4 MiB)
// holds. The enclave sends them in parts both sides count, and the run completes.
import { describe, expect, it } from 'vitest';
import { prepareCircuit } from '../../dist/index.js';
import { both, enclaveFor, pair, serverForFile } from './helpers.js';

const serverOf = serverForFile();

/** Bristol fashion: y = x1 ⊕ (⊕ of the n bits of x2), one XOR per evaluator bit. */
function parity(n: number): string {
  const lines = [`${n} ${2 * n + 1}`, `2 1 ${n}`, '1 1', ''];
  let acc = 0;
  for (let i = 1; i <= n; i++) {
    lines.push(`2 1 ${acc} ${i} ${n + i} XOR`);
    acc = n + i;
  }
  return `${lines.join('\n')}\n`;
}

describe('large evaluator inputs', () => {
  it('a 120,000-bit evaluator input in malicious mode (17 MB of input labels and σ\'s) is delivered', { timeout: 120_000 }, async () => {
    const n = 120_000;
    const c = prepareCircuit(parity(n));
    const x2 = new Uint8Array(n / 8);
    for (let i = 0; i < x2.length; i++) x2[i] = (i * 37 + 11) & 0xff;
    const { sessions, close } = await pair(60_000);
    try {
      const enclave = enclaveFor(serverOf(), { recvTimeoutMs: 60_000 });
      const run = (p: number) =>
        sessions[p]!.run(c, { inputs: [p === 0 ? Uint8Array.of(1) : x2], protocol: 'teleport-yao', mode: 'malicious', enclave });
      const [g, e] = await both(run(0), run(1));
      expect(e.status, e.status === 'rejected' ? String((e as PromiseRejectedResult).reason) : '').toBe('fulfilled');
      expect(g.status).toBe('fulfilled');
      const out = (e as PromiseFulfilledResult<(Uint8Array | undefined)[]>).value;
      expect(Array.from(out[0]!)).toEqual(Array.from(c.evaluate([Uint8Array.of(1), x2])[0]!));
    } finally {
      c.free();
      await close();
    }
  });
});
