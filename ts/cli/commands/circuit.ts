/** `webmpc circuit NAME FILE`: writes a ready-made circuit for `eval` and `party`. */
import { writeFileSync } from 'node:fs';
import { parseCommand } from '../args.js';
import { fileProblem, UsageError } from '../errors.js';
import { loadSdk, type Sdk } from '../sdk.js';


/** Ready-made circuits, built by the SDK's circuit builder. Input N belongs to party N-1. */
const READY_MADE: Record<string, { about: string; build: (c: Sdk['circuit']) => import('../../circuit/builder.js').Circuit }> = {
  aes128: {
    about: 'AES-128 encryption of one block: input 1 the key, input 2 the plaintext (128 bits each); output the ciphertext',
    build: (c) => c.aes128Circuit(),
  },
  sha256: {
    about: 'the SHA-256 compression function: input 1 a 512-bit message block, input 2 the 256-bit chaining value; output the next chaining value',
    build: (c) => c.sha256Circuit(),
  },
  compare32: {
    about: "Yao's millionaires: input 1 x, input 2 y (32 bits each); output 01 if x > y, else 00",
    build: (c) => {
      const b = new c.CircuitBuilder();
      const x = b.input(0, 32);
      const y = b.input(1, 32);
      b.output(x.gt(y));
      return b.build();
    },
  },
};

const USAGE =
  'usage: webmpc circuit NAME FILE\n' +
  '  Writes a ready-made circuit to FILE: Bristol Fashion text, or the webmpc binary form if FILE\n' +
  '  ends in .wmpc. Input N belongs to party N-1. NAME is one of:\n' +
  Object.entries(READY_MADE)
    .map(([name, c]) => `  ${name.padEnd(10)} ${c.about}\n`)
    .join('');

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommand(args, {}, USAGE, true);
  if (!parsed) return 0;
  if (parsed.positionals.length !== 2) throw new UsageError(`give a circuit NAME (${Object.keys(READY_MADE).join(', ')}) and a FILE`);
  const [name, file] = parsed.positionals as [string, string];
  const made = Object.hasOwn(READY_MADE, name) ? READY_MADE[name] : undefined;
  if (!made) throw new UsageError(`no ready-made circuit '${name}': choose one of ${Object.keys(READY_MADE).join(', ')}`);
  const sdk = await loadSdk();
  const circuit = made.build(sdk.circuit);
  try {
    writeFileSync(file, file.endsWith('.wmpc') ? circuit.toBinary() : circuit.toBristol());
  } catch (error) {
    throw new UsageError(`cannot write ${file}: ${fileProblem(error)}`);
  }
  process.stderr.write(`webmpc circuit: wrote ${file} (${name}: ${circuit.inputWidths.length} inputs, ${circuit.andCount} AND gates)\n`);
  return 0;
}
