/** Identity files: a 32-byte Ed25519 seed as 64 hex digits (`webmpc key` writes them). */
import { readFileSync } from 'node:fs';
import { fileProblem, UsageError } from './errors.js';

type Secure = typeof import('../secure/index.js');

/** Reads the identity in `file`; the seed is wiped once imported. */
export async function readIdentity(secure: Secure, file: string): Promise<import('../secure/index.js').Identity> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new UsageError(`cannot read identity ${file}: ${fileProblem(error)}`);
  }
  if (!/^[0-9a-fA-F]{64}$/.test(text)) throw new UsageError(`identity ${file} must hold 64 hex digits (a 32-byte seed)`);
  const seed = Uint8Array.from(text.match(/../g)!, (h) => parseInt(h, 16));
  try {
    return await secure.importIdentitySecret(seed);
  } finally {
    seed.fill(0);
  }
}
