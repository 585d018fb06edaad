/**
 * Option parsing every command shares: `--help`, whole numbers in a range, party indexes, and the
 * per-party options (`--peer-key Q=HEX`, `--peer Q=URL`).
 */
import { parseArgs } from 'node:util';
import { UsageError } from './errors.js';

/** `-h` / `--help`, which every command takes. */
export const HELP_OPTION = { help: { type: 'boolean', short: 'h', default: false } } as const;

type OptionsConfig = NonNullable<Parameters<typeof parseArgs>[0]>['options'] & object;

/**
 * Parses a command's arguments strictly (an unknown option, or a positional argument where the
 * command takes none, is a usage error). Returns undefined when `--help` was given, after
 * printing `usage`: the command then exits 0.
 */
export function parseCommand<O extends OptionsConfig>(
  args: string[],
  options: O,
  usage: string,
  allowPositionals = false,
): ReturnType<typeof parseArgs<{ args: string[]; options: O & typeof HELP_OPTION; strict: true; allowPositionals: boolean }>> | undefined {
  const parsed = parseArgs({ args, options: { ...options, ...HELP_OPTION }, strict: true, allowPositionals });
  if ((parsed.values as { help?: boolean }).help) {
    process.stdout.write(usage);
    return undefined;
  }
  return parsed;
}

/** `text` as a whole number in [min, max], or undefined when absent. */
export function integerOption(text: string | undefined, flag: string, min: number, max: number): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (text.trim() === '' || !Number.isInteger(n) || n < min || n > max) throw new UsageError(`${flag} must be an integer in [${min}, ${max}]`);
  return n;
}

/** `text` as a party index below `parties` (`--party`, `--garbler`, `--evaluator`). */
export function partyIndex(text: string, flag: string, parties: number): number {
  if (!/^\d{1,4}$/.test(text) || Number(text) >= parties) {
    throw new UsageError(parties === 2 ? `${flag} must be 0 or 1` : `${flag} must be a party index from 0 to ${parties - 1}`);
  }
  return Number(text);
}

/**
 * A per-party option (`--peer-key`, `--peer`): `Q=VALUE` for party Q, repeatable, or with two
 * parties a bare `VALUE` for the other party. Returns one entry per party (undefined where absent).
 */
export function perParty(list: string[] | undefined, flag: string, what: string, parties: number, party: number): (string | undefined)[] {
  const out: (string | undefined)[] = new Array<string | undefined>(parties).fill(undefined);
  for (const item of list ?? []) {
    const m = /^(\d{1,2})=(.*)$/s.exec(item);
    let q: number;
    let value: string;
    if (m) {
      q = Number(m[1]);
      value = m[2]!;
    } else if (parties === 2) {
      q = 1 - party;
      value = item;
    } else {
      throw new UsageError(`with ${parties} parties, ${flag} must name the party: ${flag} Q=${what}`);
    }
    if (q >= parties || q === party) throw new UsageError(`${flag} ${q}=...: party ${q} is not another party of the ${parties}`);
    if (out[q] !== undefined) throw new UsageError(`${flag} is given twice for party ${q}`);
    out[q] = value;
  }
  return out;
}
