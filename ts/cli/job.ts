/**
 * What `eval` and `party` compute: a circuit (`--circuit FILE`, hex values) or a program
 * (`--program FILE`, integers), as the protocol module's `computes` says; who owns each input;
 * how many parties there are; the input values from the command line, and the outputs as
 * printed.
 */
import { readFileSync } from 'node:fs';
import type { PreparedCircuit } from '../circuit/source.js';
import type { Program } from '../program/index.js';
import type { Outputs } from '../protocols/types.js';
import { fileProblem, UsageError } from './errors.js';
import { toHex } from './output.js';
import { DEFAULT_PROTOCOL, MAX_CLI_PARTIES, protocolsComputing, type Protocol, type ProtocolModule } from './protocols.js';
import type { Sdk } from './sdk.js';

/** The `util.parseArgs` options that say what to compute. */
export const JOB_OPTIONS = {
  protocol: { type: 'string', default: DEFAULT_PROTOCOL },
  circuit: { type: 'string' },
  program: { type: 'string' },
  input: { type: 'string', multiple: true },
  owners: { type: 'string' },
  parties: { type: 'string' },
} as const;

/** The values of {@link JOB_OPTIONS}. */
export interface JobValues {
  readonly circuit?: string | undefined;
  readonly program?: string | undefined;
  readonly owners?: string | undefined;
  readonly parties?: string | undefined;
}

/** A circuit or program, loaded and checked, with what the command line needs to know of it. */
export interface Job {
  /** What `Session.run` takes. */
  readonly target: PreparedCircuit | Program;
  readonly noun: 'circuit' | 'program';
  /** How its values are written: `HEX` (circuits) or `INT` (programs). */
  readonly syntax: 'HEX' | 'INT';
  /** The party supplying each input value. */
  readonly owners: readonly number[];
  /** The number of parties: the program's, or `--parties` (default: the owners'). */
  readonly parties: number;
  /** AND gates of a circuit (for `eval --json`); undefined for a program. */
  readonly andGates: number | null | undefined;
  /** Input value `index` (from 0) from its text; `what` names it in errors, never the value. */
  parseInput(index: number, text: string, what: string): Uint8Array;
  /** Outputs as printed: hex (circuits) or decimal (programs); null where not revealed. */
  print(outputs: Outputs): (string | null)[];
  free(): void;
}

/** Reads the file the protocol computes on and settles the owners and the number of parties. */
export async function loadJob(sdk: Sdk, protocol: Protocol, module: ProtocolModule, values: JobValues): Promise<Job> {
  if (module.computes === 'program') {
    if (values.circuit !== undefined || values.owners !== undefined) {
      throw new UsageError(`--protocol ${protocol} runs a --program; --circuit and --owners do not apply`);
    }
    if (values.program === undefined) throw new UsageError(`--program FILE is required with --protocol ${protocol}`);
    const job = await loadProgram(sdk, values.program);
    // The program names its parties: --parties may only say the same (a check, as in scripts
    // that pass it for every protocol).
    if (values.parties !== undefined && values.parties !== String(job.parties)) {
      throw new UsageError(`the program is for ${job.parties} parties, not --parties ${values.parties}`);
    }
    return job;
  }
  if (values.program !== undefined) throw new UsageError(`--program runs with --protocol ${protocolsComputing('program')}`);
  if (values.circuit === undefined) throw new UsageError('--circuit FILE is required');
  const circuit = loadCircuit(sdk, values.circuit);
  try {
    const owners = circuitOwners(circuit, values.owners);
    const parties = partyCount(protocol, module, values.parties, Math.max(2, ...owners.map((p) => p + 1)), circuit.inputWidths.length);
    return {
      target: circuit,
      noun: 'circuit',
      syntax: 'HEX',
      owners,
      parties,
      andGates: countAnds(circuit.binary),
      parseInput: (i, text, what) => parseHex(text, circuit.inputWidths[i]!, what),
      print: (outputs) => outputs.map((v) => (v === undefined ? null : toHex(v))),
      free: () => circuit.free(),
    };
  } catch (error) {
    circuit.free();
    throw error;
  }
}

/** Reads FILE as a webmpc binary circuit (it starts with `WMPC`) or as Bristol Fashion text. */
function loadCircuit(sdk: Sdk, file: string): PreparedCircuit {
  const bytes = readInput(file, 'circuit');
  let source: Uint8Array | string;
  if (bytes.length >= 4 && String.fromCharCode(...bytes.subarray(0, 4)) === 'WMPC') {
    source = bytes;
  } else {
    try {
      source = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new UsageError(`${file} is neither a webmpc binary circuit nor Bristol Fashion text`);
    }
  }
  try {
    return sdk.prepareCircuit(source);
  } catch (error) {
    if (error instanceof sdk.WebmpcError) throw new UsageError(`malformed circuit ${file}: ${error.message}`);
    throw error;
  }
}

/** Reads FILE as the bytes of a program (`program.bytes` of webmpc/program). */
async function loadProgram(sdk: Sdk, file: string): Promise<Job> {
  const bytes = readInput(file, 'program');
  let program: Program;
  try {
    program = await sdk.program.programFromBytes(bytes);
  } catch (error) {
    if (error instanceof sdk.WebmpcError) throw new UsageError(`malformed program ${file}: ${error.message}`);
    throw error;
  }
  return {
    target: program,
    noun: 'program',
    syntax: 'INT',
    owners: program.owners,
    parties: program.parties,
    andGates: undefined,
    parseInput: (i, text, what) => {
      const m = /^(-?)(0x[0-9a-fA-F]+|\d+)$/.exec(text.trim());
      if (!m) throw new UsageError(`${what} must be a decimal integer or 0x-prefixed hex`);
      const v = BigInt(m[2]!);
      try {
        return program.encodeInput(i, m[1] ? -v : v);
      } catch (error) {
        // The SDK numbers inputs from 0; `what` names the value as the user does.
        if (error instanceof sdk.WebmpcError) throw new UsageError(`${what} ${error.message.replace(/^input \d+ /, '')}`);
        throw error;
      }
    },
    print: (outputs) => program.decodeOutputs(outputs).map((v) => (v === undefined ? null : String(v))),
    free: () => {},
  };
}

function readInput(file: string, noun: string): Uint8Array {
  try {
    return new Uint8Array(readFileSync(file));
  } catch (error) {
    throw new UsageError(`cannot read ${noun} ${file}: ${fileProblem(error)}`);
  }
}

/**
 * The party owning each input value: `--owners 0,1,0`, else what the circuit declares, else input
 * i (from 1) belongs to party i-1.
 */
function circuitOwners(circuit: PreparedCircuit, list: string | undefined): number[] {
  const n = circuit.inputWidths.length;
  if (list === undefined) return circuit.owners ? [...circuit.owners] : circuit.inputWidths.map((_, i) => i);
  const items = list.split(',');
  if (items.length !== n || !items.every((p) => /^\d{1,3}$/.test(p))) {
    throw new UsageError(`--owners must list a party index for each of the ${n} input values, e.g. 0,1`);
  }
  const owners = items.map(Number);
  const i = circuit.owners ? owners.findIndex((p, k) => p !== circuit.owners![k]) : -1;
  if (i >= 0) throw new UsageError(`--owners contradicts the circuit: its input value ${i + 1} belongs to party ${circuit.owners![i]}`);
  return owners;
}

/**
 * `--parties N`, within what the protocol runs with (the registry's `parties`, at most
 * {@link MAX_CLI_PARTIES} here) and at least the `named` parties that own inputs; `named`
 * when absent.
 */
function partyCount(protocol: Protocol, module: ProtocolModule, text: string | undefined, named: number, inputs: number): number {
  const least = Math.max(2, module.parties.min);
  const most = Math.min(module.parties.max, MAX_CLI_PARTIES);
  if (named > most) {
    throw new UsageError(
      most === 2
        ? `${protocol} has two parties but the circuit's ${inputs} input values go to ${named}: assign them to 0 and 1 with --owners`
        : `${protocol} runs with at most ${most} parties here but the circuit's input values go to ${named}`,
    );
  }
  if (text === undefined) return Math.max(named, least);
  const n = Number(text);
  if (least === most && text !== String(least)) throw new UsageError(`${protocol} has exactly ${least} parties (--parties ${least})`);
  if (!/^\d{1,4}$/.test(text) || n < least || n > most) throw new UsageError(`--parties must be a whole number from ${least} to ${most}`);
  if (n < named) throw new UsageError(`--parties ${n} is fewer than the ${named} parties --owners names`);
  return n;
}

/**
 * A hex value for an input of `width` bits, as the ceil(width/8) big-endian bytes the session
 * takes. Error messages never repeat the value: inputs are secrets.
 */
function parseHex(text: string, width: number, what: string): Uint8Array {
  const digits = text.trim().replace(/^0x/i, '');
  if (!/^[0-9a-fA-F]+$/.test(digits)) throw new UsageError(`${what} must be a hexadecimal number`);
  let v = BigInt(`0x${digits}`);
  if (v >> BigInt(width) !== 0n) throw new UsageError(`${what} does not fit in the circuit's ${width} bits`);
  const out = new Uint8Array(Math.ceil(width / 8));
  for (let i = out.length - 1; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

/** AND gates of a validated binary circuit (format version 1), or null for another version. */
function countAnds(binary: Uint8Array): number | null {
  if (binary[4] !== 1) return null;
  const view = new DataView(binary.buffer, binary.byteOffset, binary.byteLength);
  let at = 12;
  const gates = Number(view.getBigUint64(at, true));
  at += 8;
  at += 4 + 4 * view.getUint32(at, true);
  at += 4 + 4 * view.getUint32(at, true);
  let ands = 0;
  for (let g = 0; g < gates; g++) {
    const op = binary[at];
    if (op === 1) ands++;
    at += op === 0 || op === 1 ? 13 : op === 3 ? 6 : 9;
  }
  return ands;
}

/**
 * `eval`'s inputs: `--input N=VALUE` for every input value of the job (N from 1), in input
 * order. Programs take integers, so a value that is not one is a malformed `--input`.
 */
export function allInputs(job: Job, list: readonly string[] | undefined): Uint8Array[] {
  const n = job.owners.length;
  const entry = job.syntax === 'INT' ? /^(\d+)=(-?(?:0x[0-9a-fA-F]+|\d+))$/s : /^(\d+)=(.*)$/s;
  const inputs: (Uint8Array | undefined)[] = new Array<Uint8Array | undefined>(n).fill(undefined);
  for (const arg of list ?? []) {
    const m = entry.exec(arg.trim());
    if (!m) {
      throw new UsageError(
        job.syntax === 'INT'
          ? '--input must be N=INT (program input N, numbered from 1; a decimal integer or 0x hex)'
          : '--input must be N=HEX (input value N, numbered from 1)',
      );
    }
    const k = Number(m[1]);
    if (!(k >= 1 && k <= n)) throw new UsageError(`--input ${m[1]}=...: the ${job.noun} has ${n} input value(s), numbered 1..${n}`);
    if (inputs[k - 1] !== undefined) throw new UsageError(`input ${k} is given twice`);
    inputs[k - 1] = job.parseInput(k - 1, m[2]!, `input ${k}`);
  }
  const missing = inputs.flatMap((v, i) => (v === undefined ? [i + 1] : []));
  if (missing.length > 0) throw new UsageError(`missing input value(s) ${missing.join(', ')} (--input N=${job.syntax})`);
  return inputs as Uint8Array[];
}

/** `party`'s inputs: one `--input VALUE` per input value `party` owns, in input order. */
export function partyInputs(job: Job, party: number, list: readonly string[] | undefined): Uint8Array[] {
  const mine = job.owners.flatMap((p, i) => (p === party ? [i] : []));
  const given = list ?? [];
  if (given.length !== mine.length) {
    throw new UsageError(
      `party ${party} owns ${mine.length} input value(s) (${mine.map((i) => i + 1).join(', ') || 'none'}); ${given.length} --input given`,
    );
  }
  return mine.map((i, k) => job.parseInput(i, given[k]!, `--input ${k + 1} (input value ${i + 1})`));
}
