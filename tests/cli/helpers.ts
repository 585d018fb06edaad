// Running the `webmpc` command as a user does (`node dist/cli.js ...` in a child process), shared
// by the CLI tests: `cli` for a run to its end, `live` for a process the test talks to (stdin)
// and watches (stderr) while it runs, and `partiesOverWebSockets` for N `webmpc party`
// processes that reach each other directly (party q listens on a free port it prints; the
// parties below dial it).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../helpers.js';

export const CLI = join(ROOT, 'dist/cli.js');

/** The FIPS-197 AES-128 vector (`aes_128.txt`: input 1 the key, input 2 the plaintext). */
export const FIPS = { key: '000102030405060708090a0b0c0d0e0f', pt: '00112233445566778899aabbccddeeff', ct: '69c4e0d86a7b0430d8cdb78070b4c55a' };

export interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `webmpc ARGS...` to its end (killed after `timeout` ms: code null). */
export function cli(args: string[], timeout = 30_000): Promise<Result> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** A CLI process whose stdin the test writes and whose stderr it watches line by line. */
export interface Live {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the first match of `pattern` on stderr (waits for it). */
  waitFor(pattern: RegExp): Promise<RegExpMatchArray>;
  /** Resolves when the process exited, with its code and the time (performance.now()). */
  exit: Promise<{ code: number | null; at: number }>;
}

export function live(args: string[]): Live {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const watchers: (() => void)[] = [];
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
    for (const w of [...watchers]) w();
  });
  const exit = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.once('exit', (code) => {
      for (const w of [...watchers]) w();
      resolve({ code, at: performance.now() });
    }),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exit,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const m = err.match(pattern);
          if (m) {
            watchers.splice(watchers.indexOf(check), 1);
            resolve(m);
          } else if (child.exitCode !== null) {
            watchers.splice(watchers.indexOf(check), 1);
            reject(new Error(`exited (${child.exitCode}) before printing ${pattern}: ${err}`));
          }
        };
        watchers.push(check);
        check();
      }),
  };
}

/**
 * Runs `webmpc party` for each of `parties` parties over direct WebSockets (`--transport
 * websocket`), each with the arguments `argsFor(party)` adds, and waits for all to exit. Starts
 * them from the highest party down, each listening on a free port once it says which, so every
 * party has the addresses of the parties above it.
 */
export async function partiesOverWebSockets(parties: number, room: string, argsFor: (party: number) => string[]): Promise<Live[]> {
  const urls: string[] = [];
  const procs: Live[] = [];
  for (let p = parties - 1; p >= 0; p--) {
    const peers = urls.flatMap((url, q) => (url && q > p ? ['--peer', `${q}=${url}`] : []));
    const proc = live(['party', '--party', String(p), '--parties', String(parties), '--transport', 'websocket', '--room', room, ...(p > 0 ? ['--listen', '0'] : []), ...peers, ...argsFor(p)]);
    procs[p] = proc;
    if (p > 0) urls[p] = (await proc.waitFor(/listening on (ws:\/\/\S+)/))[1]!;
  }
  await Promise.all(procs.map((proc) => proc.exit));
  return procs;
}
