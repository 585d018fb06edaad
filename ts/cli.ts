#!/usr/bin/env node
/**
 * The `webmpc` command: a dispatcher of subcommands, so later tools (scripted parties, the
 * enclave server, ...) join as entries of {@link COMMANDS}.
 *
 *   webmpc signal [--port N] [--host H] [--relay] [--ice URL]... [--ice-username U --ice-credential C]
 *   webmpc eval   --circuit FILE [--protocol yao2pc|authgc|plain] --input 1=HEX --input 2=HEX ... [--json]
 *   webmpc eval   --protocol mascot --program FILE --input 1=INT --input 2=INT ... [--json]
 *   webmpc party  --circuit FILE --party P [--parties N] --input HEX ... (--signal URL --room ID | --transport websocket ...)
 *                 (--peer-key [Q=]HEX ... | --confirm | --insecure)
 *   webmpc enclave-server --backend simulation|openenclave [--port N] [--host H] [--program PATH] ...
 *   webmpc key    FILE
 *   webmpc circuit NAME FILE
 *   webmpc --version
 *
 * Exit codes: 0 success, 1 the computation failed (network, peer, protocol abort, the other party
 * not authenticated), 2 bad usage or bad input (options, files, circuits, input values), 130/143
 * interrupted (SIGINT/SIGTERM; the other party is told). User errors print one line, never a
 * stack. The process exits as soon as its work is done: nothing it opened stays open.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

interface Command {
  summary: string;
  run(args: string[]): Promise<number>;
}

const COMMANDS: Record<string, Command> = {
  signal: {
    summary: 'run the WebRTC signaling server (and, with --relay, the WebSocket frame relay)',
    run: runSignal,
  },
  eval: {
    summary: 'run a circuit (or, with --protocol mascot, an arithmetic program) with every party in this process',
    run: runEval,
  },
  party: {
    summary: 'run one party of a computation over WebRTC or WebSocket (authgc: any number of parties)',
    run: runParty,
  },
  'enclave-server': {
    summary: 'host the teleport enclave program beside an evaluator (WebSocket; simulation or Open Enclave backend)',
    run: runEnclaveServer,
  },
  key: {
    summary: "print the public key of an identity file (creating the file with a fresh identity if missing)",
    run: runKey,
  },
  circuit: {
    summary: 'write a ready-made circuit (aes128, sha256, compare32) to a file, for eval and party',
    run: runCircuit,
  },
};

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return (
    `usage: webmpc <command> [options]\n\ncommands:\n${lines.join('\n')}\n\n` +
    '`webmpc <command> --help` explains its options; `webmpc --version` prints the version.\n'
  );
}

/** The version in the package's package.json (next to dist/, where this file is built to). */
function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

const SIGNAL_USAGE =
  'usage: webmpc signal [--port N] [--host H] [--relay] [--ice URL]... [--ice-username U --ice-credential C]\n' +
  '  Runs the signaling server that introduces the parties of a room to each other (WebRTC offers,\n' +
  '  answers and candidates); it never sees the computation. Stops on Ctrl-C (SIGINT) or SIGTERM.\n' +
  '  --port N          TCP port to listen on (default 8787; 0 picks a free one, printed on start)\n' +
  '  --host H          interface to bind (default 127.0.0.1, this machine only; 0.0.0.0 serves\n' +
  '                    other machines)\n' +
  '  --relay           also relay frames at ws://HOST:PORT/relay, for parties without a\n' +
  '                    peer-to-peer path (they then use connectRelay instead of WebRTC)\n' +
  '  --ice URL         a STUN or TURN server handed to every joining party, e.g.\n' +
  '                    stun:stun.example.org:3478 (repeatable; default none: enough on one network)\n' +
  '  --ice-username U, --ice-credential C\n' +
  '                    the credentials of the TURN servers given with --ice\n' +
  '  Limits per client address: 32 connections and 8 rooms; a connection must join a room within\n' +
  '  10 s and is dropped after 10 min without traffic.\n';

async function runSignal(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string', default: '8787' },
      host: { type: 'string', default: '127.0.0.1' },
      relay: { type: 'boolean', default: false },
      ice: { type: 'string', multiple: true },
      'ice-username': { type: 'string' },
      'ice-credential': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(SIGNAL_USAGE);
    return 0;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    process.stderr.write('webmpc signal: --port must be an integer in [0, 65535]\n');
    return 2;
  }
  const { startSignalingServer } = await import('./net/server.js');
  const urls = values.ice ?? [];
  const iceServers = urls.map((url) => {
    const server: { urls: string; username?: string; credential?: string } = { urls: url };
    if (values['ice-username'] !== undefined) server.username = values['ice-username'];
    if (values['ice-credential'] !== undefined) server.credential = values['ice-credential'];
    return server;
  });
  const server = await startSignalingServer({ port, host: values.host, relay: values.relay, iceServers });
  process.stdout.write(`webmpc signal: listening on ${server.url}${values.relay ? ` (relay at ${server.url}/relay)` : ''}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  return 0;
}

// ---------------------------------------------------------------------------------------------
// webmpc enclave-server

const ENCLAVE_SERVER_USAGE =
  'usage: webmpc enclave-server --backend simulation|openenclave [--port N] [--host H] [--program PATH]\n' +
  '                             [--enclave-image PATH] [--evidence-key FILE] [--allow-origin ORIGIN]...\n' +
  '                             [--max-sessions N] [--max-sessions-per-client N] [--max-wires N]\n' +
  '                             [--max-gates N] [--max-rots N] [--max-jobs N] [--max-memory BYTES]\n' +
  '       webmpc enclave-server --backend simulation --print-measurement [--program PATH]\n' +
  '  Hosts the teleport enclave program for evaluators (teleport-yao, teleported OT): one enclave\n' +
  '  program per WebSocket connection, one attested session for all its jobs.\n' +
  '  --backend simulation   the native program with a software evidence key: NO HARDWARE PROTECTION\n' +
  '                         (this host can read every seed); clients must set allowSimulatedEnclave\n' +
  '  --backend openenclave  webmpc_host (--program) and a signed enclave image (--enclave-image),\n' +
  '                         built with the Open Enclave SDK on an SGX machine\n' +
  '  --port N               default 8790 (0: any free port); --host default 127.0.0.1\n' +
  '  --program PATH         the enclave program (simulation default: the one shipped with the package)\n' +
  '  --evidence-key FILE    simulation: a 64-hex-digit Ed25519 seed, so clients can pin the signer\n' +
  '  --allow-origin ORIGIN  a browser origin allowed to connect (repeatable; * for any). Default none:\n' +
  '                         a request with an Origin header (any web page) is refused\n' +
  '  --max-sessions N       sessions at most (16); --max-sessions-per-client N (4, by remote address)\n' +
  '  --max-wires, --max-gates, --max-rots N   per job; --max-jobs N per session;\n' +
  '  --max-memory BYTES     memory one job may declare (default 268435456: 256 MiB)\n' +
  '  --print-measurement    print the measurement clients pin (hex SHA-256 of the program) and exit\n';

async function runEnclaveServer(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      backend: { type: 'string' },
      port: { type: 'string', default: '8790' },
      host: { type: 'string', default: '127.0.0.1' },
      program: { type: 'string' },
      'enclave-image': { type: 'string' },
      'evidence-key': { type: 'string' },
      'max-wires': { type: 'string' },
      'max-gates': { type: 'string' },
      'max-rots': { type: 'string' },
      'max-jobs': { type: 'string' },
      'max-memory': { type: 'string' },
      'max-sessions': { type: 'string' },
      'max-sessions-per-client': { type: 'string' },
      'allow-origin': { type: 'string', multiple: true },
      'print-measurement': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(ENCLAVE_SERVER_USAGE);
    return 0;
  }
  const backend = values.backend;
  if (backend !== 'simulation' && backend !== 'openenclave') throw new UsageError('--backend must be simulation or openenclave');
  const int = (v: string | undefined, name: string, min: number, max: number): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`${name} must be an integer in [${min}, ${max}]`);
    return n;
  };
  const port = int(values.port, '--port', 0, 65_535)!;
  const limits = {
    maxWires: int(values['max-wires'], '--max-wires', 1, 2 ** 32 - 1),
    maxGates: int(values['max-gates'], '--max-gates', 1, Number.MAX_SAFE_INTEGER),
    maxRots: int(values['max-rots'], '--max-rots', 1, Number.MAX_SAFE_INTEGER),
    maxJobs: int(values['max-jobs'], '--max-jobs', 1, 2 ** 20),
    maxMemory: int(values['max-memory'], '--max-memory', 1, Number.MAX_SAFE_INTEGER),
    maxSessions: int(values['max-sessions'], '--max-sessions', 1, 10_000),
    maxSessionsPerClient: int(values['max-sessions-per-client'], '--max-sessions-per-client', 1, 10_000),
  };
  const server = await import('./enclave/server.js');
  if (values['print-measurement']) {
    if (backend !== 'simulation') throw new UsageError('--print-measurement is for the simulation backend (Open Enclave: oesign dump -e IMAGE)');
    const program = server.findEnclaveProgram(values.program);
    const { execFileSync } = await import('node:child_process');
    process.stdout.write(`${execFileSync(program, ['--print-measurement'], { encoding: 'utf8' }).trim()}\n`);
    return 0;
  }
  const s = await server.startEnclaveServer({
    backend,
    port,
    host: values.host,
    ...(values.program !== undefined ? { program: values.program } : {}),
    ...(values['enclave-image'] !== undefined ? { enclaveImage: values['enclave-image'] } : {}),
    ...(values['evidence-key'] !== undefined ? { evidenceKey: values['evidence-key'] } : {}),
    ...Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)),
    ...(values['allow-origin'] !== undefined ? { allowedOrigins: values['allow-origin'] } : {}),
  });
  const label = s.simulated ? ' [SIMULATION BACKEND: NOT AN ENCLAVE, NO HARDWARE PROTECTION]' : ' [Open Enclave]';
  process.stdout.write(`webmpc enclave-server: listening on ${s.url}${label}\n`);
  if (s.measurement) process.stdout.write(`measurement ${s.measurement}\n`);
  if (s.signer) process.stdout.write(`evidence signer ${s.signer}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await s.close();
  return 0;
}

// ---------------------------------------------------------------------------------------------
// eval and party: shared plumbing

/** A mistake of the caller (options, files, circuits, input values): one line, exit code 2. */
class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** `util.parseArgs` rejections (unknown option, missing value) are usage errors too. */
function isParseArgsError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}

type Sdk = typeof import('./index.js');
type Prepared = import('./circuit/source.js').PreparedCircuit;
type Protocol = import('./session.js').Protocol;

async function loadSdk(): Promise<Sdk> {
  const sdk = await import('./index.js');
  await sdk.init();
  return sdk;
}

function fileProblem(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'is a directory';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return typeof code === 'string' ? code : 'unreadable';
}

/** Reads FILE as a webmpc binary circuit (it starts with `WMPC`) or as Bristol Fashion text. */
function loadCircuit(sdk: Sdk, file: string | undefined): Prepared {
  if (file === undefined) throw new UsageError('--circuit FILE is required');
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(readFileSync(file));
  } catch (error) {
    throw new UsageError(`cannot read circuit ${file}: ${fileProblem(error)}`);
  }
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

function parseProtocol(text: string): Protocol {
  if (text !== 'yao2pc' && text !== 'authgc' && text !== 'plain') throw new UsageError(`--protocol must be yao2pc, authgc or plain`);
  return text;
}

/** Most parties the command line runs authgc with (the protocol module allows as many). */
const MAX_CLI_PARTIES = 32;

/** `--parties N` (at least `least`, the parties the owners name), or `least` when absent. */
function partyCount(text: string | undefined, least: number, protocol: Protocol): number {
  if (text === undefined) return least;
  const n = Number(text);
  if (!/^\d{1,2}$/.test(text) || n < 2 || n > MAX_CLI_PARTIES) throw new UsageError(`--parties must be a whole number from 2 to ${MAX_CLI_PARTIES}`);
  if (protocol === 'yao2pc' && n !== 2) throw new UsageError('yao2pc has exactly two parties (--parties 2)');
  if (n < least) throw new UsageError(`--parties ${n} is fewer than the ${least} parties --owners names`);
  return n;
}

/** `--evaluator P` for authgc (default 0): a party index below `parties`. */
function evaluatorOf(text: string | undefined, parties: number, protocol: Protocol): number | undefined {
  if (text === undefined) return protocol === 'authgc' ? 0 : undefined;
  if (protocol !== 'authgc') throw new UsageError('--evaluator applies to --protocol authgc only');
  const e = Number(text);
  if (!/^\d{1,2}$/.test(text) || e >= parties) throw new UsageError(`--evaluator must be a party index from 0 to ${parties - 1}`);
  return e;
}

/**
 * The party owning each input value: `--owners 0,1,0`, or by default input i (from 1) belongs to
 * party i-1. Checks that yao2pc gets exactly two parties.
 */
function inputOwners(circuit: Prepared, list: string | undefined, protocol: Protocol): { owners: number[]; parties: number } {
  const n = circuit.inputWidths.length;
  let owners: number[];
  if (list === undefined) {
    owners = circuit.inputWidths.map((_, i) => i);
  } else {
    const items = list.split(',');
    if (items.length !== n || !items.every((p) => /^\d{1,3}$/.test(p))) {
      throw new UsageError(`--owners must list a party index for each of the ${n} input values, e.g. 0,1`);
    }
    owners = items.map(Number);
  }
  const parties = Math.max(2, ...owners.map((p) => p + 1));
  if (protocol === 'yao2pc' && parties > 2) {
    throw new UsageError(
      `yao2pc has two parties but the circuit's ${n} input values go to ${parties}: assign them to 0 and 1 with --owners`,
    );
  }
  return { owners, parties };
}

/**
 * A hex value for an input of `width` bits, as the ceil(width/8) big-endian bytes the session
 * takes. Error messages never repeat the value: inputs are secrets.
 */
function parseValue(text: string, width: number, what: string): Uint8Array {
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

/**
 * A per-party option (`--peer-key`, `--peer`): `Q=VALUE` for party Q, repeatable, or with two
 * parties a bare `VALUE` for the other party. Returns one entry per party (undefined where absent).
 */
function perParty(list: string[] | undefined, flag: string, what: string, parties: number, party: number): (string | undefined)[] {
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

function toHex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

/** Reads an identity file: a 32-byte Ed25519 seed as 64 hex digits. */
async function readIdentity(
  secure: typeof import('./secure/index.js'),
  file: string,
): Promise<import('./secure/index.js').Identity> {
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

// ---------------------------------------------------------------------------------------------
// webmpc key

const KEY_USAGE =
  'usage: webmpc key FILE\n' +
  '  Prints the public key (64 hex digits) of the identity in FILE, creating FILE (mode 0600) with a\n' +
  '  fresh identity first if it does not exist. Give the printed key to the other party, who passes\n' +
  '  it to `webmpc party --peer-key`; pass FILE to your own `webmpc party --identity`.\n';

async function runKey(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { help: { type: 'boolean', short: 'h', default: false } },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    process.stdout.write(KEY_USAGE);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError('give exactly one identity FILE');
  const file = positionals[0]!;
  const secure = await import('./secure/index.js');
  if (!existsSync(file)) {
    const identity = await secure.generateIdentity();
    const seed = await secure.exportIdentitySecret(identity);
    try {
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

// ---------------------------------------------------------------------------------------------
// webmpc circuit

/** Ready-made circuits, built by the SDK's circuit builder. Input N belongs to party N-1. */
const READY_MADE: Record<string, { about: string; build: (c: Sdk['circuit']) => import('./circuit/builder.js').Circuit }> = {
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

const CIRCUIT_USAGE =
  'usage: webmpc circuit NAME FILE\n' +
  '  Writes a ready-made circuit to FILE: Bristol Fashion text, or the webmpc binary form if FILE\n' +
  '  ends in .wmpc. Input N belongs to party N-1. NAME is one of:\n' +
  Object.entries(READY_MADE)
    .map(([name, c]) => `  ${name.padEnd(10)} ${c.about}\n`)
    .join('');

async function runCircuit(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { help: { type: 'boolean', short: 'h', default: false } },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    process.stdout.write(CIRCUIT_USAGE);
    return 0;
  }
  if (positionals.length !== 2) throw new UsageError(`give a circuit NAME (${Object.keys(READY_MADE).join(', ')}) and a FILE`);
  const [name, file] = positionals as [string, string];
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

// ---------------------------------------------------------------------------------------------
// webmpc eval

const EVAL_USAGE =
  'usage: webmpc eval --circuit FILE --input 1=HEX --input 2=HEX ... [--protocol yao2pc|authgc|plain] [--owners LIST] [--json]\n' +
  '  Runs every party in this process over in-memory transports (a check of a circuit and of\n' +
  '  inputs before running it between machines with `webmpc party`) and prints each output value\n' +
  '  as big-endian hex, one per line.\n' +
  '  --circuit FILE   Bristol Fashion text or a webmpc binary circuit (`webmpc circuit` writes\n' +
  '                   ready-made ones)\n' +
  '  --input N=HEX    circuit input value N (numbered from 1, as in the circuit) as a hex number;\n' +
  '                   one for every input of the circuit\n' +
  '  --owners LIST    the party owning each input value, e.g. 0,0,1 (default: party N-1 owns\n' +
  '                   input N)\n' +
  '  --protocol NAME  yao2pc (default, two parties), authgc (malicious-secure, any number of\n' +
  '                   parties: as many as --owners names, or --parties) or plain (no privacy)\n' +
  '  --parties N      authgc, plain: the number of parties (default: the highest owner + 1)\n' +
  '  --evaluator P    authgc: the evaluating party (default 0)\n' +
  '  --json           print {"outputs": [...], "protocol", "ms", "andGates"} instead (authgc:\n' +
  '                   also "parties")\n' +
  '\n' +
  'usage: webmpc eval --protocol mascot --program FILE --input 1=INT --input 2=INT ... [--json]\n' +
  '  Runs an arithmetic program (the bytes of a webmpc/program Program, `program.bytes`) with\n' +
  '  MASCOT, every party of the program in this process, and prints each output as a decimal\n' +
  '  integer, one per line.\n' +
  '  --input N=INT    program input N (numbered from 1) as a decimal integer (negative for signed\n' +
  '                   inputs) or 0x-prefixed hex; the program says which party owns it\n' +
  '  --json           print {"outputs": [...], "protocol", "ms", "parties"} instead\n';

async function runEval(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      circuit: { type: 'string' },
      program: { type: 'string' },
      protocol: { type: 'string', default: 'yao2pc' },
      input: { type: 'string', multiple: true },
      owners: { type: 'string' },
      parties: { type: 'string' },
      evaluator: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(EVAL_USAGE);
    return 0;
  }
  if (values.protocol === 'mascot' || values.program !== undefined) return runEvalProgram(values);
  const protocol = parseProtocol(values.protocol);
  if (values.circuit === undefined) throw new UsageError('--circuit FILE is required');
  const sdk = await loadSdk();
  const circuit = loadCircuit(sdk, values.circuit);
  try {
    const named = inputOwners(circuit, values.owners, protocol);
    const owners = named.owners;
    const parties = partyCount(values.parties, named.parties, protocol);
    const evaluator = evaluatorOf(values.evaluator, parties, protocol);
    const n = circuit.inputWidths.length;
    const inputs: (Uint8Array | undefined)[] = new Array<Uint8Array | undefined>(n).fill(undefined);
    for (const arg of values.input ?? []) {
      const m = /^(\d+)=(.*)$/s.exec(arg);
      if (!m) throw new UsageError('--input must be N=HEX (input value N, numbered from 1)');
      const k = Number(m[1]);
      if (!(k >= 1 && k <= n)) throw new UsageError(`--input ${m[1]}=...: the circuit has ${n} input value(s), numbered 1..${n}`);
      if (inputs[k - 1] !== undefined) throw new UsageError(`input ${k} is given twice`);
      inputs[k - 1] = parseValue(m[2]!, circuit.inputWidths[k - 1]!, `input ${k}`);
    }
    const missing = inputs.flatMap((v, i) => (v === undefined ? [i + 1] : []));
    if (missing.length > 0) throw new UsageError(`missing input value(s) ${missing.join(', ')} (--input N=HEX)`);

    const transports = sdk.createMemoryTransports(parties);
    const t0 = performance.now();
    let results: (Uint8Array | undefined)[][];
    try {
      results = await runAll(
        transports,
        async (transport, party) => {
          const s = await sdk.session({ transport, party, parties });
          try {
            const mine = inputs.filter((_, i) => owners[i] === party) as Uint8Array[];
            return await s.run(circuit, { inputs: mine, owners, protocol, evaluator });
          } finally {
            s.free();
          }
        },
      );
    } finally {
      await Promise.all(transports.map((t) => t.close()));
    }
    const ms = performance.now() - t0;
    const outputs = results[0]!.map((v) => toHex(v!));
    for (const other of results.slice(1)) {
      if (other.map((v) => toHex(v!)).join() !== outputs.join()) throw new Error('the parties disagree on the outputs (a bug)');
    }
    if (values.json) {
      const andGates = countAnds(circuit.binary);
      process.stdout.write(`${JSON.stringify({ outputs, protocol, ...(protocol === 'authgc' ? { parties } : {}), ms: Math.round(ms * 10) / 10, andGates })}\n`);
    } else {
      process.stdout.write(outputs.map((o) => `${o}\n`).join(''));
    }
    return 0;
  } finally {
    circuit.free();
  }
}

/** `webmpc eval --protocol mascot --program FILE`: every party of an arithmetic program here. */
async function runEvalProgram(values: {
  program?: string;
  circuit?: string;
  protocol: string;
  input?: string[];
  owners?: string;
  parties?: string;
  evaluator?: string;
  json: boolean;
}): Promise<number> {
  if (values.protocol !== 'mascot') throw new UsageError('--program runs with --protocol mascot');
  if (values.circuit !== undefined || values.owners !== undefined) throw new UsageError('--protocol mascot runs a --program; --circuit and --owners do not apply');
  if (values.parties !== undefined || values.evaluator !== undefined) throw new UsageError('--protocol mascot: the program names its parties; --parties and --evaluator do not apply');
  const file = values.program;
  if (file === undefined) throw new UsageError('--program FILE is required with --protocol mascot');
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(readFileSync(file));
  } catch (error) {
    throw new UsageError(`cannot read program ${file}: ${fileProblem(error)}`);
  }
  const sdk = await loadSdk();
  let program: import('./program/index.js').Program;
  try {
    program = await sdk.program.programFromBytes(bytes);
  } catch (error) {
    if (error instanceof sdk.WebmpcError) throw new UsageError(`malformed program ${file}: ${error.message}`);
    throw error;
  }
  const n = program.owners.length;
  const inputs: (Uint8Array | undefined)[] = new Array<Uint8Array | undefined>(n).fill(undefined);
  for (const arg of values.input ?? []) {
    const m = /^(\d+)=(-?(?:0x[0-9a-fA-F]+|\d+))$/s.exec(arg.trim());
    if (!m) throw new UsageError('--input must be N=INT (program input N, numbered from 1; a decimal integer or 0x hex)');
    const k = Number(m[1]);
    if (!(k >= 1 && k <= n)) throw new UsageError(`--input ${m[1]}=...: the program has ${n} input value(s), numbered 1..${n}`);
    if (inputs[k - 1] !== undefined) throw new UsageError(`input ${k} is given twice`);
    const text = m[2]!;
    const v = text.startsWith('-') ? -BigInt(text.slice(1)) : BigInt(text);
    try {
      inputs[k - 1] = program.encodeInput(k - 1, v);
    } catch (error) {
      // The SDK numbers inputs from 0; here they count from 1.
      if (error instanceof sdk.WebmpcError) throw new UsageError(`input ${k} ${error.message.replace(/^input \d+ /, '')}`);
      throw error;
    }
  }
  const missing = inputs.flatMap((v, i) => (v === undefined ? [i + 1] : []));
  if (missing.length > 0) throw new UsageError(`missing input value(s) ${missing.join(', ')} (--input N=INT)`);
  const parties = program.parties;
  const transports = sdk.createMemoryTransports(parties);
  const t0 = performance.now();
  let results: (bigint | undefined)[][];
  try {
    results = await runAll(transports, async (transport, party) => {
      const s = await sdk.session({ transport, party, parties });
      try {
        const mine = inputs.filter((_, i) => program.owners[i] === party) as Uint8Array[];
        return program.decodeOutputs(await s.run(program, { inputs: mine, protocol: 'mascot' }));
      } finally {
        s.free();
      }
    });
  } finally {
    await Promise.all(transports.map((t) => t.close()));
  }
  const ms = performance.now() - t0;
  // Every output from a party it is revealed to (here, all parties are in this process).
  const outputs = program.outputs.map((to, i) => String(results[to[0]!]![i]));
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ outputs, protocol: 'mascot', ms: Math.round(ms * 10) / 10, parties })}\n`);
  } else {
    process.stdout.write(outputs.map((o) => `${o}\n`).join(''));
  }
  return 0;
}

/**
 * Runs `f` for every party at once. The first failure closes every transport (so no party waits
 * forever on one that gave up) and is what this rejects with, once all have settled.
 */
async function runAll<T>(
  transports: readonly import('./net/transport.js').Transport[],
  f: (t: import('./net/transport.js').Transport, party: number) => Promise<T>,
): Promise<T[]> {
  let first: { error: unknown } | undefined;
  const runs = transports.map((t, party) =>
    f(t, party).catch(async (error: unknown) => {
      first ??= { error };
      await Promise.all(transports.map((u) => u.close().catch(() => {})));
      throw error;
    }),
  );
  const settled = await Promise.allSettled(runs);
  if (first) throw first.error;
  return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
}

// ---------------------------------------------------------------------------------------------
// webmpc party

const PARTY_USAGE =
  'usage: webmpc party --circuit FILE --party P [--parties N] --input HEX ... --room ID\n' +
  '                    (--signal ws://HOST:PORT | --transport websocket (--listen PORT | --peer [Q=]ws://HOST:PORT ...))\n' +
  '                    (--peer-key [Q=]HEX ... | --confirm | --insecure) [options]\n' +
  '  Runs one party of a computation with parties on other machines (or processes) and prints the\n' +
  '  output values revealed to this party, one per line, as big-endian hex.\n' +
  '\n' +
  'What to compute:\n' +
  '  --circuit FILE   Bristol Fashion text or a webmpc binary circuit (`webmpc circuit` writes\n' +
  '                   ready-made ones); both parties must use the same file\n' +
  '  --party P        which party this is: 0 or 1, or 0..N-1 with --parties N\n' +
  '  --parties N      the number of parties (default 2; more with --protocol authgc)\n' +
  '  --input HEX      one of this party\'s input values, as a hex number (0x optional), repeated\n' +
  '                   in circuit order; by default party P owns circuit input P+1\n' +
  '  --owners LIST    the party owning each circuit input, e.g. 0,0,1 (default 0,1,...)\n' +
  '  --protocol NAME  yao2pc (default: garbled circuits, private against parties that follow\n' +
  '                   the protocol), authgc (authenticated garbling: private and correct against\n' +
  '                   any N-1 parties that deviate; a cheater can only make the others abort) or\n' +
  '                   plain (no privacy at all: for debugging)\n' +
  '  --evaluator P    authgc: the evaluating party (default 0); all parties get every output\n' +
  '\n' +
  'How to reach the other party (both name the same --room ID: 1-128 letters, digits, _ . -):\n' +
  '  --room ID        the room both parties name, e.g. a random string they agreed on\n' +
  '  --signal URL     the signaling server (`webmpc signal`), e.g. ws://HOST:8787; the parties then\n' +
  '                   connect directly over WebRTC (the default --transport webrtc)\n' +
  '  --transport websocket  direct WebSockets instead, no signaling server: each party dials\n' +
  '                   every party above it and listens for the ones below; then:\n' +
  '  --listen PORT    (every party but 0) the port to listen on\n' +
  '  --host H         the interface to listen on (default 127.0.0.1)\n' +
  '  --peer Q=URL     the address ws://HOST:PORT of party Q, for every Q above this party\n' +
  '                   (repeat it); with two parties, party 0 may write --peer URL\n' +
  '\n' +
  'Who the other party is (it is authenticated before any input is used):\n' +
  '  --identity FILE  this party\'s identity (`webmpc key FILE` creates one and prints its public\n' +
  '                   key); default: a fresh one. Its public key is printed on stderr.\n' +
  '  --peer-key HEX   the other party\'s public key (from its `webmpc key`): pinned, nothing to\n' +
  '                   ask. For scripts.\n' +
  '  --peer-key Q=HEX with more than two parties: party Q\'s public key (repeat it per peer)\n' +
  '  (in a terminal)  for every peer without --peer-key, the parties print a short\n' +
  '                   authentication string and ask to continue; answer y only if the other side\n' +
  '                   shows the same string.\n' +
  '  --confirm        ask that question even when stdin is not a terminal (reads y/N from stdin)\n' +
  '  --insecure       no authentication: whoever takes another party\'s place in the room\n' +
  '                   computes with you and learns what the output reveals of your input.\n' +
  '                   Experiments only.\n' +
  '\n' +
  'Other options:\n' +
  '  --timeout MS       how long to wait for the other party to connect and authenticate\n' +
  '                     (default 30000)\n' +
  '  --peer-timeout MS  the other party counts as gone after this long silent (default 3000)\n' +
  '  --json             print {"outputs": [hex or null], "protocol", "party", "ms": {connect,\n' +
  '                     compute}} instead\n' +
  'Exit codes: 0 done, 1 the computation failed (or the other party was not authenticated),\n' +
  '2 bad usage or input, 130/143 interrupted (the other party is told).\n';

async function runParty(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      circuit: { type: 'string' },
      party: { type: 'string' },
      input: { type: 'string', multiple: true },
      owners: { type: 'string' },
      protocol: { type: 'string', default: 'yao2pc' },
      parties: { type: 'string' },
      evaluator: { type: 'string' },
      transport: { type: 'string', default: 'webrtc' },
      signal: { type: 'string' },
      room: { type: 'string' },
      listen: { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      peer: { type: 'string', multiple: true },
      identity: { type: 'string' },
      'peer-key': { type: 'string', multiple: true },
      confirm: { type: 'boolean', default: false },
      insecure: { type: 'boolean', default: false },
      timeout: { type: 'string', default: '30000' },
      'peer-timeout': { type: 'string', default: '3000' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(PARTY_USAGE);
    return 0;
  }
  const protocol = parseProtocol(values.protocol);
  if (protocol !== 'authgc' && values.parties !== undefined && values.parties !== '2') {
    throw new UsageError(`${protocol} runs between two parties here: --parties N needs --protocol authgc`);
  }
  const parties = partyCount(values.parties, 2, protocol);
  if (!/^\d{1,2}$/.test(values.party ?? '') || Number(values.party) >= parties) {
    throw new UsageError(parties === 2 ? '--party must be 0 or 1' : `--party must be a party index from 0 to ${parties - 1}`);
  }
  const party = Number(values.party);
  const evaluator = evaluatorOf(values.evaluator, parties, protocol);
  const timeoutMs = Number(values.timeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new UsageError('--timeout must be a positive number of milliseconds');
  const peerTimeoutMs = Number(values['peer-timeout']);
  if (!Number.isInteger(peerTimeoutMs) || peerTimeoutMs < 500) throw new UsageError('--peer-timeout must be a number of milliseconds >= 500');
  // How the other parties are authenticated, decided before anything connects.
  const keyTexts = perParty(values['peer-key'], '--peer-key', 'HEX', parties, party);
  const keyed = keyTexts.filter((k) => k !== undefined).length;
  const allKeyed = keyed === parties - 1;
  const given = [
    keyed > 0 && '--peer-key',
    values.confirm && (allKeyed || keyed === 0) && '--confirm',
    values.insecure && '--insecure',
  ].filter(Boolean);
  if (given.length > 1) throw new UsageError(`${given.join(' and ')} exclude each other`);
  let trust: 'pinned' | 'confirm' | 'tofu';
  if (allKeyed) trust = 'pinned';
  else if (values.insecure) trust = 'tofu';
  else if (values.confirm || process.stdin.isTTY) trust = 'confirm';
  else if (keyed > 0) {
    const missing = keyTexts.flatMap((k, q) => (k === undefined && q !== party ? [q] : []));
    throw new UsageError(
      `cannot authenticate party ${missing.join(', ')}: pass --peer-key Q=HEX for every peer, or run in a terminal ` +
        '(or with --confirm) to compare the short authentication strings of the others',
    );
  } else {
    throw new UsageError(
      `cannot authenticate the other ${parties === 2 ? 'party' : 'parties'}: pass --peer-key HEX (its \`webmpc key\`), or run in a terminal to ` +
        'compare the short authentication string (--confirm reads the answer from stdin), or --insecure for experiments',
    );
  }
  if (values.room === undefined) throw new UsageError('--room ID is required (both parties name the same room)');
  const kind = values.transport;
  const dial = perParty(values.peer, '--peer', 'ws://HOST:PORT', parties, party);
  if (kind === 'webrtc') {
    if (values.signal === undefined) throw new UsageError('--signal ws://HOST:PORT is required with --transport webrtc');
  } else if (kind === 'websocket') {
    if (party > 0 && values.listen === undefined) throw new UsageError(`party ${party} listens: --listen PORT is required`);
    const above = [...Array(parties).keys()].filter((q) => q > party && dial[q] === undefined);
    if (above.length > 0) {
      throw new UsageError(
        parties === 2
          ? 'party 0 dials party 1: --peer ws://HOST:PORT is required'
          : `party ${party} dials every party above it: --peer Q=ws://HOST:PORT is required for party ${above.join(', ')}`,
      );
    }
    const below = dial.findIndex((u, q) => u !== undefined && q < party);
    if (below >= 0) throw new UsageError(`party ${below} dials this party (it is below it): no --peer for it`);
  } else {
    throw new UsageError('--transport must be webrtc or websocket');
  }
  const listenPort = values.listen === undefined ? undefined : Number(values.listen);
  if (listenPort !== undefined && !(Number.isInteger(listenPort) && listenPort >= 0 && listenPort <= 65_535)) {
    throw new UsageError('--listen must be a port in [0, 65535]');
  }
  if (values.circuit === undefined) throw new UsageError('--circuit FILE is required');

  const sdk = await loadSdk();
  const secure = await import('./secure/index.js');
  const net = await import('./net/node.js');
  const circuit = loadCircuit(sdk, values.circuit);
  const cleanup: (() => unknown)[] = [() => circuit.free()];
  try {
    const { owners, parties: named } = inputOwners(circuit, values.owners, protocol);
    if (protocol === 'plain' && owners.some((p) => p > 1)) throw new UsageError('party runs two-party computations only');
    if (named > parties) throw new UsageError(`--owners names ${named} parties but --parties is ${parties}`);
    const mine = owners.flatMap((p, i) => (p === party ? [i] : []));
    const given = values.input ?? [];
    if (given.length !== mine.length) {
      throw new UsageError(
        `party ${party} owns ${mine.length} input value(s) (${mine.map((i) => i + 1).join(', ') || 'none'}); ${given.length} --input given`,
      );
    }
    const inputs = mine.map((i, k) => parseValue(given[k]!, circuit.inputWidths[i]!, `--input ${k + 1} (input value ${i + 1})`));

    const identity = values.identity !== undefined ? await readIdentity(secure, values.identity) : await secure.generateIdentity();
    cleanup.push(() => secure.disposeIdentity(identity));
    const pinned = keyTexts.map((text) => {
      if (text === undefined) return undefined;
      try {
        return secure.publicKeyFromHex(text);
      } catch {
        throw new UsageError('--peer-key must be a 32-byte public key in hex (64 digits)');
      }
    });
    const say = (line: string) => process.stderr.write(`webmpc party ${party}: ${line}\n`);
    say(`own key ${secure.publicKeyToHex(identity.publicKey)}`);
    if (trust === 'tofu') {
      const who = parties === 2 ? 'the other party is' : 'the other parties are';
      say(`WARNING: --insecure: ${who} not authenticated; whoever joins the room can take a party's place`);
    }

    // SIGINT/SIGTERM: tell the other party (an abort with the reason) and stop at once. A second
    // signal kills the process the default way.
    const interrupted = new AbortController();
    let live: import('./net/transport.js').Transport | undefined;
    const onSignal = (signal: NodeJS.Signals) => {
      if (interrupted.signal.aborted) return;
      // Close first, so this reason (not a generic "cancelled") is what the other party is told.
      void live?.close(new sdk.TransportError('ABORTED', `party ${party} was interrupted (${signal})`));
      interrupted.abort(new Interrupted(signal));
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    cleanup.push(() => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    });
    const common = { connectTimeoutMs: timeoutMs, peerTimeoutMs, signal: interrupted.signal };

    const t0 = performance.now();
    try {
      let inner: import('./net/transport.js').Transport;
      if (kind === 'webrtc') {
        inner = await net.connectNodeMesh({ ...common, signalingUrl: values.signal!, room: values.room, party, parties });
      } else {
        const listener = party > 0 ? await net.listenWebSocket({ port: listenPort!, host: values.host }) : undefined;
        if (listener) say(`listening on ${listener.url}`);
        inner = await net.connectWebSocketMesh({
          ...common,
          party,
          parties,
          session: values.room,
          peers: dial,
          ...(listener ? { listener } : {}),
        });
      }
      live = inner;
      cleanup.push(() => inner.close());
      const transport = await secure.secureTransport(inner, {
        identity,
        sessionId: values.room,
        trust,
        peers: pinned,
        handshakeTimeoutMs: timeoutMs,
        signal: interrupted.signal,
        confirm: (peers, { signal }) => askToContinue(say, party, peers, signal),
      });
      live = transport;
      cleanup.push(() => transport.close());
      for (const peer of transport.verifications) {
        const whose = parties === 2 ? 'peer key' : `party ${peer.party} key`;
        if (trust === 'tofu') say(`${whose} ${peer.fingerprint} (not authenticated), short authentication string ${peer.sas}`);
        else say(`${whose} ${peer.fingerprint} authenticated (${peer.pinned ? 'pinned' : 'confirmed'})`);
      }
      const connectMs = performance.now() - t0;

      const t1 = performance.now();
      const s = await sdk.session({ transport, party, parties });
      cleanup.push(() => s.free());
      const out = await s.run(circuit, { inputs, owners, protocol, evaluator, signal: interrupted.signal });
      const computeMs = performance.now() - t1;
      const outputs = out.map((v) => (v === undefined ? null : toHex(v)));
      if (values.json) {
        const ms = { connect: Math.round(connectMs * 10) / 10, compute: Math.round(computeMs * 10) / 10 };
        process.stdout.write(`${JSON.stringify({ outputs, protocol, party, ms })}\n`);
      } else {
        process.stdout.write(outputs.map((o) => `${o ?? '(not revealed to this party)'}\n`).join(''));
      }
      return 0;
    } catch (error) {
      // Whatever failed because of the interrupt, the interrupt is what to report.
      if (interrupted.signal.aborted) throw interrupted.signal.reason;
      // Tell the other party why we stop (once the secure channel is up, through it).
      await live?.close(error instanceof Error ? error : new Error(String(error))).catch(() => {});
      throw error;
    }
  } finally {
    for (const f of cleanup.reverse()) {
      try {
        await f();
      } catch {
        // Best effort: the run's own outcome is what gets reported.
      }
    }
  }
}

/** The run was stopped by a signal; exits with 128 + its number. */
class Interrupted extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`interrupted (${signal})`);
    this.name = 'Interrupted';
  }
}

/**
 * The `'confirm'` question: shows each peer's key and short authentication string (those whose
 * key was not pinned) on stderr and reads y/N from stdin, once for all of them. Anything but
 * y/yes (including the end of stdin) is no.
 */
function askToContinue(
  say: (line: string) => void,
  party: number,
  peers: readonly import('./secure/index.js').PeerVerification[],
  signal: AbortSignal,
): Promise<boolean> {
  const shown = peers.filter((p) => !p.pinned);
  for (const peer of shown) {
    say(`party ${peer.party} presents key ${peer.fingerprint}`);
    say(`short authentication string: ${peer.sas}`);
  }
  if (shown.length === 1) {
    say('compare it with the other party (by voice, in person): both must see the same string.');
    process.stderr.write(`webmpc party ${party}: same string on both sides? continue [y/N] `);
  } else {
    say('compare each with that party (by voice, in person): each pair must see the same string.');
    process.stderr.write(`webmpc party ${party}: same strings on every side? continue [y/N] `);
  }
  return new Promise<boolean>((resolve) => {
    const lines = createInterface({ input: process.stdin, terminal: false });
    let answered = false;
    const answer = (ok: boolean, moot = false) => {
      if (answered) return;
      answered = true;
      signal.removeEventListener('abort', onMoot);
      lines.close();
      // readline resumed stdin; pause and unref it so it does not keep the process alive
      // (pausing alone does not, once data has flowed).
      process.stdin.pause();
      (process.stdin as { unref?: () => void }).unref?.();
      // A terminal echoed the answer and its newline; piped input did not.
      if (!process.stdin.isTTY || moot) process.stderr.write('\n');
      if (!ok && !moot) say('not confirmed: stopping');
      resolve(ok);
    };
    // The other side refused or left meanwhile: stop asking (and stop reading stdin).
    const onMoot = () => answer(false, true);
    signal.addEventListener('abort', onMoot, { once: true });
    lines.once('line', (line) => answer(/^\s*y(es)?\s*$/i.test(line)));
    lines.once('close', () => answer(false));
  });
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v' || name === 'version') {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`webmpc: unknown command '${name}'\n${usage()}`);
    return 2;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    if (error instanceof Interrupted) {
      process.stderr.write(`webmpc ${name}: ${error.message}\n`);
      return error.signal === 'SIGINT' ? 130 : 143;
    }
    if (error instanceof UsageError || isParseArgsError(error)) {
      process.stderr.write(`webmpc ${name}: ${(error as Error).message}\n`);
      return 2;
    }
    process.stderr.write(`webmpc ${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
// Everything main opened is closed by now, so Node exits on its own. Should anything still hold the
// event loop (a bug), exit anyway, and say so: a finished party must never linger.
setTimeout(() => {
  process.stderr.write('webmpc: still running 2 s after finishing (a handle was left open); exiting\n');
  process.exit();
}, 2_000).unref();
