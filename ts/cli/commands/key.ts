/** `webmpc key FILE`: an identity's public key, creating the identity first if FILE is missing. */
import { existsSync, writeFileSync } from 'node:fs';
import { parseCommand } from '../args.js';
import { fileProblem, UsageError } from '../errors.js';
import { readIdentity } from '../identity.js';


const USAGE =
  'usage: webmpc key FILE\n' +
  '  Prints the public key (64 hex digits) of the identity in FILE, creating FILE (mode 0600) with a\n' +
  '  fresh identity first if it does not exist. Give the printed key to the other party, who passes\n' +
  '  it to `webmpc party --peer-key`; pass FILE to your own `webmpc party --identity`.\n';

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommand(args, {}, USAGE, true);
  if (!parsed) return 0;
  if (parsed.positionals.length !== 1) throw new UsageError('give exactly one identity FILE');
  const file = parsed.positionals[0]!;
  const secure = await import('../../secure/index.js');
  if (!existsSync(file)) {
    const identity = await secure.generateIdentity();
    const seed = await secure.exportIdentitySecret(identity);
    try {
      // wx: never overwrite an identity that appeared meanwhile.
      writeFileSync(file, `${Buffer.from(seed).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      throw new UsageError(`cannot create identity ${file}: ${fileProblem(error)}`);
    } finally {
      seed.fill(0);
      secure.disposeIdentity(identity);
    }
    process.stderr.write(`webmpc key: created ${file} (keep it secret)\n`);
  }
  const identity = await readIdentity(secure, file);
  process.stdout.write(`${secure.publicKeyToHex(identity.publicKey)}\n`);
  secure.disposeIdentity(identity);
  return 0;
}
