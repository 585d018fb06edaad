/** `webmpc party`: one party of a computation, with the others on other machines or processes. */
import type { Transport } from '../../net/transport.js';
import type { Traffic } from '../../traffic.js';
import { parseCommand, partyIndex } from '../args.js';
import { describeCompute } from '../compute.js';
import { partyInputs } from '../job.js';
import { connect, NETWORK_OPTIONS, routeOf } from '../network.js';
import { cpuMsSince, printJson, printLines, roundMs } from '../output.js';
import { roleWarnings } from '../protocols.js';
import { plan, runHelp, runOn, RUN_OPTIONS } from '../run.js';
import { loadSdk } from '../sdk.js';
import { trapInterrupts } from '../signals.js';
import { authenticate, identities, trustOf, TRUST_OPTIONS } from '../trust.js';
import { trace, traceCounters } from '../../trace.js';
import { compiledModule } from '../../engine/wasm.js';
import { discardSpareEngineWorker, prestartEngineWorker } from '../../engine/worker-host.js';


function usage(): string {
  return (
    'usage: webmpc party --circuit FILE --party P [--parties N] --input HEX ... --room ID\n' +
    '                    (--signal ws://HOST:PORT | --transport websocket (--listen PORT | --peer [Q=]ws://HOST:PORT ...))\n' +
    '                    (--peer-key [Q=]HEX ... | --confirm | --insecure) [options]\n' +
    '  Runs one party of a computation with parties on other machines (or processes) and prints the\n' +
    '  output values revealed to this party, one per line: circuits\' as big-endian hex, programs\'\n' +
    '  as decimal integers. On stderr it says whom it computes with and where it computes.\n' +
    '\n' +
    'What to compute:\n' +
    '  --circuit FILE   Bristol Fashion text or a webmpc binary circuit (`webmpc circuit` writes\n' +
    '                   ready-made ones); every party must use the same file\n' +
    '  --program FILE   instead, with --protocol mascot: a webmpc/program Program\'s bytes; it names\n' +
    '                   its parties and the owner of each input\n' +
    '  --party P        which party this is: 0 or 1, or 0..N-1 with N parties\n' +
    '  --parties N      the number of parties (default 2, or as many as --owners names; more than\n' +
    '                   two where the protocol takes them)\n' +
    '  --input VALUE    one of this party\'s input values, repeated in input order: a hex number\n' +
    '                   (0x optional) for a circuit, a decimal integer (or 0x hex) for a program\n' +
    '                   (a negative one as --input=-5); by default party P owns circuit input P+1\n' +
    '  --owners LIST    the party owning each circuit input, e.g. 0,0,1 (default 0,1,...)\n' +
    `${runHelp()}` +
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
    '  --json             print {"outputs": [hex, decimal or null], "protocol", "party", "ms":\n' +
    '                     {connect, compute}, "traffic"} instead; "traffic": this party\'s rounds,\n' +
    '                     bytes and messages per phase (Session.traffic)\n' +
    'Exit codes: 0 done, 1 the computation failed (or the other party was not authenticated),\n' +
    '2 bad usage or input, 130/143 interrupted (the other party is told).\n'
  );
}

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommand(args, { ...RUN_OPTIONS, ...NETWORK_OPTIONS, ...TRUST_OPTIONS, party: { type: 'string' } }, usage());
  if (!parsed) return 0;
  const { values } = parsed;
  trace('party', 'start', { sinceProcessStart: performance.now() });
  const sdk = await loadSdk();
  trace('party', 'sdk loaded');
  // Everything is checked before anything connects: what to compute, this party's inputs and run
  // options (as the module sees them from this party's seat), whom to trust, where to connect.
  let party = 0;
  const p = await plan(sdk, values, (parties) => [(party = partyIndex(values.party ?? '', '--party', parties))]);
  const { job } = p;
  const parties = job.parties;
  const cleanup: (() => unknown)[] = [() => job.free()];
  try {
    const inputs = partyInputs(job, party, values.input);
    const trust = trustOf(values, parties, party);
    const route = routeOf(values, parties, party);
    // Everything is checked: the engine worker starts now, while this party connects and
    // authenticates (waiting for the others, mostly), not after.
    const main = compiledModule('main');
    if (p.compute.worker && main) {
      prestartEngineWorker(main);
      cleanup.push(() => discardSpareEngineWorker());
    }
    const secure = await import('../../secure/index.js');
    const { identity, pinned } = await identities(secure, values.identity, trust);
    cleanup.push(() => secure.disposeIdentity(identity));

    const say = (line: string) => process.stderr.write(`webmpc party ${party}: ${line}\n`);
    say(`own key ${secure.publicKeyToHex(identity.publicKey)}`);
    if (trust.mode === 'tofu') {
      const who = parties === 2 ? 'the other party is' : 'the other parties are';
      say(`WARNING: --insecure: ${who} not authenticated; whoever joins the room can take a party's place`);
    }
    for (const warning of roleWarnings(p.module, p.roles)) say(warning);

    // SIGINT/SIGTERM: tell the other parties (an abort with the reason) and stop at once.
    let live: Transport | undefined;
    const interrupted = trapInterrupts((signal) => {
      // Close first, so this reason (not a generic "cancelled") is what the others are told.
      void live?.close(new sdk.TransportError('ABORTED', `party ${party} was interrupted (${signal})`));
    });
    cleanup.push(interrupted.release);

    const t0 = performance.now();
    try {
      const inner = await connect(route, party, parties, interrupted.signal, say);
      live = inner;
      trace(`party ${party}`, 'connected');
      cleanup.push(() => inner.close());
      const transport = await authenticate(secure, inner, {
        identity,
        pinned,
        trust,
        room: route.room,
        timeoutMs: route.timeoutMs,
        signal: interrupted.signal,
        say,
      });
      live = transport;
      cleanup.push(() => transport.close());
      const connectMs = performance.now() - t0;
      trace(`party ${party}`, 'authenticated');

      const t1 = performance.now();
      let traffic: Traffic | undefined;
      const cpu1 = process.cpuUsage();
      const out = await runOn(sdk, p, transport, inputs, {
        signal: interrupted.signal,
        opened: () => say(describeCompute(p.compute)),
        closed: (s) => void (traffic = s.traffic),
      });
      const computeMs = performance.now() - t1;
      trace(`party ${party}`, 'computed', { ms: computeMs, cpuMs: cpuMsSince(cpu1) });
      traceCounters(`party ${party}`);
      const outputs = job.print(out);
      if (values.json) {
        printJson({ outputs, protocol: p.protocol, party, ms: { connect: roundMs(connectMs), compute: roundMs(computeMs) }, traffic });
      } else {
        printLines(outputs.map((o) => o ?? '(not revealed to this party)'));
      }
      return 0;
    } catch (error) {
      trace(`party ${party}`, 'failed');
      // Whatever failed because of the interrupt, the interrupt is what to report.
      if (interrupted.signal.aborted) throw interrupted.signal.reason;
      // Tell the other parties why we stop (once the secure channel is up, through it).
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
