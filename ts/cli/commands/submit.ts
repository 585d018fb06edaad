/** `webmpc submit`: a client's input to a client–server run (`webmpc serve`). */
import { parseCommand } from '../args.js';
import { UsageError } from '../errors.js';
import { readIdentity } from '../identity.js';
import { printJson, printLines } from '../output.js';
import { loadSdk } from '../sdk.js';
import { trapInterrupts } from '../signals.js';

function usage(): string {
  return (
    'usage: webmpc submit --server ws://HOST:PORT=HEX ... --session ID --input INT [--identity FILE] [--json]\n' +
    '  Gives one input to the compute parties of a `webmpc serve` run and prints the public outputs,\n' +
    '  one per line (on stderr: this client\'s slot). The input is secret-shared to the servers: it\n' +
    '  stays private while one server is honest; the outputs are accepted only if every server sent\n' +
    '  the same.\n' +
    '  --server URL=KEY  each server in server order: its clients address and its public key\n' +
    '                    (pinned; from its `webmpc key`)\n' +
    '  --session ID      the run\'s name (the servers\' --room)\n' +
    '  --input INT       this client\'s input (a decimal integer in the servers\' range)\n' +
    '  --identity FILE   this client\'s identity (default: a fresh one)\n' +
    '  --timeout MS      how long to wait at each step (default 120000)\n' +
    '  --json            print {"outputs", "index", "clients"} instead\n' +
    'Exit codes: 0 done, 1 the run failed or refused this client, 2 bad usage, 130/143 interrupted.\n'
  );
}

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommand(
    args,
    {
      server: { type: 'string', multiple: true },
      session: { type: 'string' },
      input: { type: 'string' },
      identity: { type: 'string' },
      timeout: { type: 'string', default: '120000' },
      json: { type: 'boolean', default: false },
    },
    usage(),
  );
  if (!parsed) return 0;
  const { values } = parsed;
  const servers = (values.server ?? []).map((s) => {
    const m = /^(wss?:\/\/[^=\s]+)=([0-9a-fA-F]{64})$/.exec(s);
    if (!m) throw new UsageError('--server must be ws://HOST:PORT=KEY (the key: 64 hex digits)');
    return { url: m[1]!, key: m[2]! };
  });
  if (servers.length < 2) throw new UsageError('give every server (at least two) with --server URL=KEY');
  if (values.session === undefined) throw new UsageError('--session ID is required');
  if (values.input === undefined || !/^-?\d{1,40}$/.test(values.input)) throw new UsageError('--input must be a decimal integer');
  const timeoutMs = Number(values.timeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new UsageError('--timeout must be a positive number of milliseconds');
  await loadSdk();
  const secure = await import('../../secure/index.js');
  const identity = values.identity !== undefined ? await readIdentity(secure, values.identity) : await secure.generateIdentity();
  const { submit, dialServer } = await import('../../clients.js');
  const interrupted = trapInterrupts(() => {});
  try {
    const result = await submit({
      sessionId: values.session,
      input: BigInt(values.input),
      identity,
      timeoutMs,
      signal: interrupted.signal,
      servers: servers.map((s) => ({ publicKey: secure.publicKeyFromHex(s.key), connect: () => dialServer(s.url) })),
    });
    process.stderr.write(`webmpc submit: this client's slot ${result.index} of ${result.clients}; the outputs are over ${result.counted} inputs\n`);
    if (values.json) printJson({ outputs: result.outputs.map(String), index: result.index, clients: result.clients, counted: result.counted });
    else printLines(result.outputs.map(String));
    return 0;
  } catch (error) {
    if (interrupted.signal.aborted) throw interrupted.signal.reason;
    throw error;
  } finally {
    interrupted.release();
    secure.disposeIdentity(identity);
  }
}
