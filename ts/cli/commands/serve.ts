/** `webmpc serve`: one compute party of a client–server run (MASCOT or authgc among the servers). */
import type { Transport } from '../../net/transport.js';
import { integerOption, parseCommand, partyIndex } from '../args.js';
import { UsageError } from '../errors.js';
import { connect, NETWORK_OPTIONS, routeOf } from '../network.js';
import { printJson, printLines, roundMs } from '../output.js';
import { loadSdk } from '../sdk.js';
import { trapInterrupts } from '../signals.js';
import { authenticate, identities, trustOf, TRUST_OPTIONS } from '../trust.js';

function usage(): string {
  return (
    'usage: webmpc serve --party P --parties N --room ID --clients-port PORT [--protocol mascot|authgc]\n' +
    '                    [--program vickrey|sum] [--bits K]\n' +
    '                    --transport websocket (--listen PORT | --peer Q=ws://HOST:PORT ...) --peer-key Q=HEX ...\n' +
    '                    [--identity FILE] [--count N] [--window-ms MS] [--expected N] [--json]\n' +
    '  Runs compute party P of N (2 or more) for clients that give one input each (`webmpc submit`):\n' +
    '  the servers compute among themselves (malicious security with abort: inputs stay private\n' +
    '  while one server is honest) and send every accepted client the public outputs. Prints the\n' +
    '  outputs, one per line, and on stderr how many clients were accepted.\n' +
    '\n' +
    'What to compute (every server gives the same):\n' +
    '  --protocol P     mascot (default): arithmetic secret sharing, every program; authgc:\n' +
    '                   authenticated garbling, vickrey only, far faster (1,000 bids in seconds)\n' +
    '  --program NAME   vickrey (default): a sealed-bid second-price auction, outputs the winning\n' +
    '                   client\'s slot and the price; sum: the sum of the inputs\n' +
    '  --bits K         each client\'s input is an unsigned K-bit integer (default 32), range-checked\n' +
    '  --method M       for vickrey: bitwise (default: the bids\' bits, products only, ~200 triples\n' +
    '                   per 32-bit bid) or tournament (comparisons: ~150 triples and ~190 random bits)\n' +
    '  --room ID        the run\'s name: clients give it as --session (1-128 letters, digits, _ . -)\n' +
    '\n' +
    'The input window (server 0 decides when it closes):\n' +
    '  --count N        close once N clients joined (default: only the deadline)\n' +
    '  --window-ms MS   close after MS milliseconds at the latest (default 60000)\n' +
    '  --expected N     preprocess for N clients while the window is open (default --count)\n' +
    '  --input-timeout MS  how long an accepted client has to send its masked input (default 30000)\n' +
    '\n' +
    'Clients:\n' +
    '  --clients-port PORT  where clients connect (WebSocket); --clients-host H (default 127.0.0.1)\n' +
    '  --identity FILE  this server\'s identity (`webmpc key FILE`): clients pin its public key\n' +
    '\n' +
    'The other servers: as for `webmpc party` (--transport websocket, --listen, --peer, --peer-key).\n' +
    '  --json           print {"outputs", "clients", "dropped", "ms", "phases", "maxRssKb"} instead\n' +
    'Exit codes: 0 done, 1 the run failed, 2 bad usage, 130/143 interrupted.\n'
  );
}

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommand(
    args,
    {
      ...NETWORK_OPTIONS,
      ...TRUST_OPTIONS,
      party: { type: 'string' },
      parties: { type: 'string', default: '3' },
      protocol: { type: 'string', default: 'mascot' },
      program: { type: 'string', default: 'vickrey' },
      bits: { type: 'string', default: '32' },
      method: { type: 'string', default: 'bitwise' },
      count: { type: 'string' },
      'window-ms': { type: 'string', default: '60000' },
      expected: { type: 'string' },
      'input-timeout': { type: 'string', default: '30000' },
      'clients-port': { type: 'string' },
      'clients-host': { type: 'string', default: '127.0.0.1' },
      json: { type: 'boolean', default: false },
    },
    usage(),
  );
  if (!parsed) return 0;
  const { values } = parsed;
  const parties = integerOption(values.parties, '--parties', 2, 16)!;
  const party = partyIndex(values.party ?? '', '--party', parties);
  const bits = integerOption(values.bits, '--bits', 1, 64)!;
  const count = integerOption(values.count, '--count', 1, 1_000_000);
  const windowMs = integerOption(values['window-ms'], '--window-ms', 1, 86_400_000)!;
  const expected = integerOption(values.expected, '--expected', 0, 1_000_000);
  const inputTimeoutMs = integerOption(values['input-timeout'], '--input-timeout', 100, 3_600_000)!;
  const clientsPort = integerOption(values['clients-port'], '--clients-port', 0, 65535);
  if (clientsPort === undefined) throw new UsageError('--clients-port PORT is required (where clients connect)');
  if (values.program !== 'vickrey' && values.program !== 'sum') throw new UsageError('--program must be vickrey or sum');
  if (values.method !== 'bitwise' && values.method !== 'tournament') throw new UsageError('--method must be bitwise or tournament');
  if (values.protocol !== 'mascot' && values.protocol !== 'authgc') throw new UsageError('--protocol must be mascot or authgc');
  if (values.protocol === 'authgc' && values.program !== 'vickrey') throw new UsageError('--protocol authgc computes --program vickrey only');
  const authgc = values.protocol === 'authgc';
  const method = values.method;
  // The bitwise auction takes each bid as its bits (each checked), the rest the bid as one integer.
  const input = !authgc && values.program === 'vickrey' && method === 'bitwise' ? ({ type: 'bits', bits } as const) : ({ type: 'unsigned', bits } as const);
  const trust = trustOf(values, parties, party);
  const route = routeOf(values, parties, party);
  const sdk = await loadSdk();
  const programs = await import('../../program/index.js');
  const program = (n: number) => {
    if (values.program === 'vickrey') return programs.vickreyAuction({ parties, bids: n, bits, bidders: 'clients', method });
    const b = new programs.ProgramBuilder({ parties });
    let sum = b.constant(0);
    for (let i = 0; i < n; i++) sum = sum.add(b.uint('client', bits));
    b.output(sum);
    return b.build();
  };
  const { vickreyClientsCircuit } = await import('../../circuit/index.js');
  const what = authgc ? { protocol: 'authgc' as const, circuit: (n: number) => vickreyClientsCircuit({ clients: n, bits }) } : { program };
  const secure = await import('../../secure/index.js');
  const { identity, pinned } = await identities(secure, values.identity, trust);
  const say = (line: string) => process.stderr.write(`webmpc serve ${party}: ${line}\n`);
  say(`own key ${secure.publicKeyToHex(identity.publicKey)}`);
  const net = await import('../../net/node.js');
  const clients = await net.listenForClients({ port: clientsPort, host: values['clients-host'] });
  say(`clients connect to ${clients.url}`);
  let live: Transport | undefined;
  const interrupted = trapInterrupts((signal) => {
    void live?.close(new sdk.TransportError('ABORTED', `server ${party} was interrupted (${signal})`));
  });
  try {
    const inner = await connect(route, party, parties, interrupted.signal, say);
    live = inner;
    const transport = await authenticate(secure, inner, { identity, pinned, trust, room: route.room, timeoutMs: route.timeoutMs, signal: interrupted.signal, say });
    live = transport;
    const t0 = performance.now();
    const { serve } = await import('../../clients.js');
    const result = await serve({
      transport,
      identity,
      sessionId: route.room,
      clients,
      input,
      ...what,
      window: { closeAfterMs: windowMs, ...(count !== undefined ? { count } : {}) },
      ...(expected !== undefined ? { expectedClients: expected } : {}),
      inputTimeoutMs,
      signal: interrupted.signal,
      onProgress: (p) => {
        if (p.phase !== 'window') say(`${p.phase}${p.accepted !== undefined ? ` (${p.accepted} clients accepted of ${p.joined} joined)` : ''}`);
      },
    });
    const ms = roundMs(performance.now() - t0);
    say(`${result.clients.length} clients' inputs used, ${result.dropped.length} dropped`);
    if (values.json) {
      // maxRssKb: this process's peak memory, for the clients bench (memory as clients grow).
      printJson({ outputs: result.outputs.map(String), clients: result.clients.length, dropped: result.dropped, ms, phases: result.ms, maxRssKb: process.resourceUsage().maxRSS });
    }
    else printLines(result.outputs.map(String));
    await transport.close().catch(() => {});
    return 0;
  } catch (error) {
    if (interrupted.signal.aborted) throw interrupted.signal.reason;
    await live?.close(error instanceof Error ? error : new Error(String(error))).catch(() => {});
    throw error;
  } finally {
    interrupted.release();
    await clients.close();
    secure.disposeIdentity(identity);
  }
}
