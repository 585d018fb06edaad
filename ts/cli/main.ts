/**
 * The `webmpc` command: a dispatcher of subcommands, one module each under `./commands/`.
 *
 *   webmpc signal [--port N] [--host H] [--relay] [--ice URL]... [--ice-username U --ice-credential C]
 *   webmpc eval   --circuit FILE [--protocol NAME] --input 1=HEX --input 2=HEX ... [--json]
 *   webmpc eval   --protocol mascot --program FILE --input 1=INT --input 2=INT ... [--json]
 *   webmpc party  --circuit FILE --party P [--parties N] --input HEX ... (--signal URL --room ID | --transport websocket ...)
 *                 (--peer-key [Q=]HEX ... | --confirm | --insecure)
 *   webmpc serve  --party P --parties N --room ID --clients-port PORT ... (a compute party for clients)
 *   webmpc submit --server URL=KEY ... --session ID --input INT
 *   webmpc enclave-server --backend simulation|openenclave [--port N] [--host H] [--program PATH] ...
 *   webmpc key    FILE
 *   webmpc circuit NAME FILE
 *   webmpc --version
 *
 * `eval` and `party` run any protocol of the registry (`ts/protocols/index.ts`): `./protocols.ts`
 * turns what a module declares into options, `./run.ts` is what the two share, and
 * `./job.ts`, `./compute.ts`, `./network.ts` and `./trust.ts` parse one group of options each.
 *
 * Exit codes: 0 success, 1 the computation failed (network, peer, protocol abort, the other party
 * not authenticated), 2 bad usage or bad input (options, files, circuits, input values), 130/143
 * interrupted (SIGINT/SIGTERM; the other party is told). User errors print one line, never a
 * stack. The process exits as soon as its work is done: nothing it opened stays open.
 */
import { readFileSync } from 'node:fs';
import { Interrupted, isParseArgsError, UsageError } from './errors.js';

/** A command module: `run` resolves to the exit code, or throws (see `main`). */
interface Command {
  run(args: string[]): Promise<number>;
}

/**
 * The subcommands. The summaries live here, so `webmpc --help` loads no command; each module is
 * loaded only when its command runs.
 */
const COMMANDS: Readonly<Record<string, { readonly summary: string; load(): Promise<Command> }>> = {
  signal: {
    summary: 'run the WebRTC signaling server (and, with --relay, the WebSocket frame relay)',
    load: () => import('./commands/signal.js'),
  },
  eval: {
    summary: 'run a circuit (or, with --protocol mascot, an arithmetic program) with every party in this process',
    load: () => import('./commands/eval.js'),
  },
  party: {
    summary: 'run one party of a computation over WebRTC or WebSocket (authgc, plain, mascot: any number of parties)',
    load: () => import('./commands/party.js'),
  },
  serve: {
    summary: 'run a compute party of a client–server run: clients give inputs, the servers compute (MASCOT)',
    load: () => import('./commands/serve.js'),
  },
  submit: {
    summary: 'give one input to a client–server run (`webmpc serve`) and print its public outputs',
    load: () => import('./commands/submit.js'),
  },
  'enclave-server': {
    summary: 'host the teleport enclave program beside an evaluator (WebSocket; simulation or Open Enclave backend)',
    load: () => import('./commands/enclave-server.js'),
  },
  key: {
    summary: 'print the public key of an identity file (creating the file with a fresh identity if missing)',
    load: () => import('./commands/key.js'),
  },
  circuit: {
    summary: 'write a ready-made circuit (aes128, sha256, compare32) to a file, for eval and party',
    load: () => import('./commands/circuit.js'),
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
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Runs `webmpc ARGV...`; resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v' || name === 'version') {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name === undefined ? 2 : 0;
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!entry) {
    process.stderr.write(`webmpc: unknown command '${name}'\n${usage()}`);
    return 2;
  }
  try {
    return await (await entry.load()).run(rest);
  } catch (error) {
    if (error instanceof Interrupted) {
      process.stderr.write(`webmpc ${name}: ${error.message}\n`);
      return error.signal === 'SIGINT' ? 130 : 143;
    }
    if (error instanceof UsageError || isParseArgsError(error)) {
      process.stderr.write(`webmpc ${name}: ${(error as Error).message}\n`);
      return 2;
    }
    process.stderr.write(`webmpc ${name}: ${failureLine(error)}\n`);
    return 1;
  }
}

/**
 * The one line a failed computation prints: the error's message and, for the SDK's typed errors,
 * its code (what a script or a person looks up), unless the message already says it.
 */
function failureLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code) && !message.includes(code) ? `${message} (${code})` : message;
}
