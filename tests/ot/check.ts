// Shared by the OT tests that run over real networks: checks every OT of a run.

/**
 * Indices of the OTs where the receiver's block is not the sender's block for its choice, and
 * of those where it also equals the other block (which a correct OT gives with probability 2^-128).
 */
export function badOts(m0: Uint8Array, m1: Uint8Array, choices: Uint8Array, got: Uint8Array) {
  const n = choices.length;
  if (m0.length !== 16 * n || m1.length !== 16 * n || got.length !== 16 * n) {
    throw new Error(`lengths: m0 ${m0.length}, m1 ${m1.length}, got ${got.length}, ${n} choices`);
  }
  const wrong: number[] = [];
  const equalsOther: number[] = [];
  for (let j = 0; j < n; j++) {
    const c = choices[j]!;
    if (c !== 0 && c !== 1) throw new Error(`choice ${j} is ${c}`);
    const want = c ? m1 : m0;
    const other = c ? m0 : m1;
    let diffWant = 0;
    let diffOther = 0;
    for (let i = 16 * j; i < 16 * j + 16; i++) {
      diffWant |= got[i]! ^ want[i]!;
      diffOther |= got[i]! ^ other[i]!;
    }
    if (diffWant !== 0) wrong.push(j);
    if (diffOther === 0) equalsOther.push(j);
  }
  return { wrong: wrong.slice(0, 10), wrongCount: wrong.length, equalsOther: equalsOther.slice(0, 10) };
}
