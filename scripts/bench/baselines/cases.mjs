// The circuits the peer baselines run, with inputs and known answers (from
// /work/shared/circuits/README.md), each answer cross-checked against node:crypto when this
// module loads, so a wrong constant here cannot make a wrong output pass.
import { createCipheriv, createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const hex = (s) => Uint8Array.from(Buffer.from(s, 'hex'));

/** The directory of the reference Bristol Fashion circuits (as the other suites find it). */
export function circuitsDir(root) {
  const candidates = [process.env.WEBMPC_CIRCUITS, join(root, '..', 'shared', 'circuits', 'bristol_fashion'), '/work/shared/circuits/bristol_fashion'];
  const dir = candidates.find((d) => d && existsSync(join(d, 'aes_128.txt')));
  if (!dir) throw new Error('Bristol circuits not found (set WEBMPC_CIRCUITS to the bristol_fashion directory)');
  return dir;
}

// SHA-256 of "abc" is one compression of the padded block from the standard IV.
const SHA_BLOCK = (() => {
  const b = new Uint8Array(64);
  b.set([0x61, 0x62, 0x63, 0x80]);
  b[63] = 0x18; // message length in bits, big-endian in the last 8 bytes
  return b;
})();
const SHA_IV = hex('6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19');

/**
 * name -> { file, inputs: byte strings (big-endian, one per input value, in circuit order),
 * expected: the output bytes, and: AND gates }.
 */
export const CASES = {
  aes128: {
    file: 'aes_128.txt',
    inputs: [hex('000102030405060708090a0b0c0d0e0f'), hex('00112233445566778899aabbccddeeff')],
    expected: hex('69c4e0d86a7b0430d8cdb78070b4c55a'),
    and: 6400,
  },
  sha256: {
    file: 'sha256.txt',
    inputs: [SHA_BLOCK, SHA_IV],
    expected: hex('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'),
    and: 22573,
  },
};

// Cross-checks (run once on import).
{
  const a = CASES.aes128;
  const c = createCipheriv('aes-128-ecb', a.inputs[0], null).setAutoPadding(false);
  const ct = Buffer.concat([c.update(a.inputs[1]), c.final()]);
  if (!ct.equals(Buffer.from(a.expected))) throw new Error('baselines: AES-128 known answer disagrees with node:crypto');
  const s = CASES.sha256;
  if (s.inputs[0].length !== 64) throw new Error('baselines: SHA-256 block is not 64 bytes');
  if (!createHash('sha256').update('abc').digest().equals(Buffer.from(s.expected))) {
    throw new Error('baselines: SHA-256 known answer disagrees with node:crypto');
  }
}

/** Wire bits (one 0/1 per byte, wire k = bit k of the big-endian integer) of a byte string. */
export function bitsFromBytesBE(bytes, width = bytes.length * 8) {
  const bits = new Uint8Array(width);
  for (let k = 0; k < width; k++) {
    const byte = bytes[bytes.length - 1 - (k >> 3)] ?? 0;
    bits[k] = (byte >> (k & 7)) & 1;
  }
  return bits;
}

/** The inverse of {@link bitsFromBytesBE}. */
export function bytesBEFromBits(bits) {
  const n = Math.ceil(bits.length / 8);
  const out = new Uint8Array(n);
  for (let k = 0; k < bits.length; k++) if (bits[k]) out[n - 1 - (k >> 3)] |= 1 << (k & 7);
  return out;
}

/**
 * Who supplies what when `parties` parties run a circuit with input values v0, v1, …: party i
 * owns input value i (parties beyond the last value contribute no input: they garble and check,
 * as the helper parties of an n-party run do); with fewer parties than values, the last party
 * owns the rest. The same rule for every baseline and for our protocol keeps the runs comparable.
 * @returns {number[][]} for each party, the indices of the input values it owns
 */
export function inputOwners(values, parties) {
  const owners = Array.from({ length: parties }, () => []);
  for (let v = 0; v < values; v++) owners[Math.min(v, parties - 1)].push(v);
  return owners;
}
