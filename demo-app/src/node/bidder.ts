/**
 * A bidder in Node: joins an auction room over WebRTC (node-datachannel) beside browser bidders
 * or other Node bidders, and places its bid. Built by Vite into `demo-app/dist/node/bidder.mjs`.
 *
 *   node demo-app/dist/node/bidder.mjs --link 'http://HOST:PORT/?room=R&n=3&engine=authgc&signal=ws://HOST:8787' --bid 1234
 *   node demo-app/dist/node/bidder.mjs --signal ws://HOST:8787 --room R --bidders 3 --bid 1234
 *
 * Options: --seat K (default: the first free seat), --engine NAME, --wait SECONDS (for the other
 * bidders to arrive; default 600), --json (one JSON line with the result on stdout), --yes.
 * Keys: after the key exchange it prints, per other bidder, the pair's six-digit code and the
 * bidder's key, and asks on the terminal whether the codes match what the other bidders see
 * (`--yes` accepts them without asking, for scripts; the codes are still printed).
 *
 * Started by `scripts/demo.mjs` with an IPC channel and `--ipc`, it instead takes its orders
 * over IPC, hands its public key to the launcher and pins every other bidder's key (the launcher
 * stands in for the out-of-band exchange scripted bidders would do once).
 *
 * Exit codes: 0 the auction finished, 1 it failed (the reason is printed), 2 bad usage.
 */
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { init, prestartWorker } from 'webmpc';
import { connectNodeMesh } from 'webmpc/net/node';
import { disposeIdentity, generateIdentity, publicKeyFromHex, publicKeyToHex } from 'webmpc/secure';
import { DEFAULT_ENGINE, MAX_BID, PhaseClock, parseBid, phaseLabel, placeBid, type AuctionResult, type PhaseRecord, type PhaseUpdate, type StallPoint } from '../auction.js';
import { explain, joinRoom, parseLink, roomProblem, secureRoom, shortFingerprint, type AuctionLink } from '../room.js';

const USAGE = `usage: bidder.mjs --link URL --bid N [--seat K] [--wait S] [--yes] [--json]
       bidder.mjs --signal ws://HOST:PORT --room NAME --bidders N --bid N [--engine authgc|mascot|plain] [--seat K] [--wait S] [--yes] [--json]
  --link URL      the auction's shareable link (as the page shows it)
  --signal URL    the signaling server (ws://…), when not given by --link
  --room NAME     the room (letters, digits, _ . -), when not given by --link
  --bidders N     how many bidders take part, when not given by --link
  --engine NAME   the protocol (default ${DEFAULT_ENGINE}); every bidder must use the same
  --bid N         this bidder's bid, a whole number from 0 to ${MAX_BID}; it stays in this process
  --seat K        take bidder seat K (0-based) instead of the first free one
  --wait S        seconds to wait for every bidder to arrive (default 600)
  --yes           accept the other bidders' codes without asking (they are printed; without it,
                  the terminal asks whether they match what the other bidders see)
  --json          print the result as one JSON line on stdout`;

/** What the launcher sends a managed bidder. */
interface StartOrder {
  type: 'start';
  link: AuctionLink & { signalingUrl: string; seat: number };
  bid: number;
  waitS: number;
  /**
   * Testing only (`npm run demo -- --stall SEAT:POINT`, one of `STALL_POINTS` in `auction.ts`): the bidder
   * stops there and waits forever, alive (and, once connected, answering heartbeats), so the
   * deadlines of the launcher and of the other bidders can be seen to fire and to name the phase
   * and this bidder.
   */
  stallAt?: string;
}

/** What a managed bidder tells the launcher about its progress (the launcher's deadlines). */
interface PhaseReport {
  type: 'phase';
  phase: string;
  done: number;
  total: number;
}

type Say = (line: string) => void;

class UsageError extends Error {}

/** The options of a stand-alone run, checked. */
function parseCommandLine(argv: string[]): {
  link: AuctionLink & { signalingUrl: string };
  bid: number;
  waitS: number;
  json: boolean;
  yes: boolean;
} {
  const { values } = parseArgs({
    args: argv,
    options: {
      link: { type: 'string' },
      signal: { type: 'string' },
      room: { type: 'string' },
      bidders: { type: 'string' },
      engine: { type: 'string' },
      bid: { type: 'string' },
      seat: { type: 'string' },
      wait: { type: 'string' },
      json: { type: 'boolean', default: false },
      yes: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) throw new UsageError('');
  const query = new URLSearchParams();
  if (values.link !== undefined) {
    let url: URL;
    try {
      url = new URL(values.link);
    } catch {
      throw new UsageError('--link must be the auction URL the page shows');
    }
    url.searchParams.forEach((v, k) => query.set(k, v));
  }
  if (values.room !== undefined) {
    const bad = roomProblem(values.room);
    if (bad) throw new UsageError(`--room: ${bad}`);
    query.set('room', values.room);
  }
  if (values.bidders !== undefined) query.set('n', values.bidders);
  if (values.engine !== undefined) query.set('engine', values.engine);
  if (values.signal !== undefined) query.set('signal', values.signal);
  if (values.seat !== undefined) query.set('seat', values.seat);
  const link = parseLink(query);
  if (link === undefined) throw new UsageError('say which auction to join: --link URL, or --room and --bidders');
  if ('problem' in link) throw new UsageError(link.problem);
  if (!link.signalingUrl) throw new UsageError('say where the signaling server is: --signal ws://HOST:PORT (or a --link that has it)');
  const bid = values.bid === undefined ? undefined : parseBid(values.bid);
  if (bid === undefined) throw new UsageError(`--bid must be a whole number from 0 to ${MAX_BID}`);
  const waitS = values.wait === undefined ? 600 : Number(values.wait);
  if (!(waitS > 0 && Number.isFinite(waitS))) throw new UsageError('--wait must be a positive number of seconds');
  if (!values.yes && !process.stdin.isTTY) throw new UsageError('no terminal to ask whether the codes match: say --yes to accept them (they are printed)');
  return { link: { ...link, signalingUrl: link.signalingUrl }, bid, waitS, json: values.json, yes: values.yes };
}

/** The next IPC message of `type` from the launcher. */
function message<T>(type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: { type?: unknown }) => {
      if (m?.type !== type) return;
      cleanup();
      resolve(m as T);
    };
    const onGone = () => {
      cleanup();
      reject(new Error('the launcher went away'));
    };
    const cleanup = () => {
      process.off('message', onMessage);
      process.off('disconnect', onGone);
    };
    process.on('message', onMessage);
    process.once('disconnect', onGone);
  });
}

function describePhases(phases: readonly PhaseRecord[]): string {
  return phases
    .map((p) => `${phaseLabel(p.phase)} ${p.ms.toFixed(0)} ms${p.bytesSent === undefined ? '' : ` / ${p.bytesSent} B`}`)
    .join('; ');
}

/** Asks on the terminal; resolves true for "y"/"yes", false otherwise or when `signal` fires. */
async function askTerminal(question: string, signal: AbortSignal): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(question, { signal });
    return /^y(es)?$/i.test(answer.trim());
  } catch {
    return false;
  } finally {
    rl.close();
  }
}

/**
 * One bidder's auction. With `keys` (managed mode) this bidder's public key is handed out and
 * every other bidder's key pinned; without, the pairs' codes are printed and confirmed (`yes`:
 * without asking). Resolves with the result and the phases; rejects with an error carrying the
 * failure explained (`explained`).
 */
async function bid(
  link: AuctionLink & { signalingUrl: string },
  amount: number,
  waitS: number,
  say: Say,
  trust: { exchange: (ownHex: string) => Promise<string[]> } | { yes: boolean },
  onPhase?: (u: PhaseUpdate) => void,
  managed?: { beforeSecuring: () => Promise<void>; handshakeTimeoutMs: number },
): Promise<{ result: AuctionResult; phases: readonly PhaseRecord[]; seat: number }> {
  let lastNote = 0;
  const clock = new PhaseClock((u) => {
    onPhase?.(u);
    const now = performance.now();
    if (u.total > 0 && u.done > 0 && u.done < u.total && now - lastNote < 1000) return;
    lastNote = now;
    say(u.total > 0 ? `${phaseLabel(u.phase)}: ${Math.floor((100 * u.done) / u.total)} %` : `${phaseLabel(u.phase)}…`);
  });
  await init();
  // The session's engine worker starts while this bidder waits for the others and connects.
  prestartWorker();
  const identity = await generateIdentity();
  const own = publicKeyToHex(identity.publicKey);
  say(`your bid: ${amount} (stays in this process); your key: ${shortFingerprint(own)}`);
  try {
    const pinnedHex = 'exchange' in trust ? await trust.exchange(own) : undefined;
    clock.enter('connecting');
    const mesh = await joinRoom({
      connect: (o) => connectNodeMesh(o),
      signalingUrl: link.signalingUrl,
      room: link.room,
      bidders: link.bidders,
      seat: link.seat,
      waitMs: waitS * 1000,
      onPeer: (b, state) => say(state === 'present' ? `bidder ${b} is in the room` : `connected to bidder ${b}`),
    });
    say(`joined room ${link.room} as bidder ${mesh.party} of ${link.bidders}; connected to every other bidder over WebRTC`);
    clock.enter('securing');
    await managed?.beforeSecuring();
    const pinned = pinnedHex?.map((hex, i) => (i === mesh.party ? undefined : publicKeyFromHex(hex)));
    const { transport, peers } = await secureRoom({
      transport: mesh,
      identity,
      room: link.room,
      pinned,
      handshakeTimeoutMs: managed?.handshakeTimeoutMs,
      confirm: async (peers, { signal }) => {
        clock.enter('confirming');
        for (const p of peers) say(`code with bidder ${p.bidder}: ${p.sas} (its key ${shortFingerprint(p.fingerprint)})`);
        if ('yes' in trust && trust.yes) {
          say('codes accepted (--yes)');
          return true;
        }
        return askTerminal('Do these codes match what the other bidders see for you? [y/N] ', signal);
      },
    });
    say(`secure channels: ${peers.map((p) => `bidder ${p.bidder} key ${shortFingerprint(p.fingerprint)}${p.pinned ? ' (pinned)' : ` code ${p.sas}`}`).join(', ')}`);
    const result = await placeBid({ transport, bid: amount, engine: link.engine, clock });
    clock.end();
    return { result, phases: clock.records, seat: mesh.party };
  } catch (err) {
    clock.end();
    const explained = explain(err, clock.phase ?? 'connecting', { signalingUrl: link.signalingUrl });
    throw Object.assign(new Error('auction failed'), { explained, cause: err });
  } finally {
    disposeIdentity(identity);
  }
}

function outcomeLine(result: AuctionResult, seat: number): string {
  return result.winner === seat
    ? `result: you win; you pay ${result.price}, the second-highest bid`
    : `result: bidder ${result.winner} wins and pays ${result.price}, the second-highest bid`;
}

/** Never settles, and keeps the process alive: the `--stall` test hook's idea of a stuck bidder. */
function stallForever(say: Say, where: string): Promise<never> {
  say(`(test) stalling ${where}, as the launcher asked`);
  setInterval(() => {}, 60_000);
  return new Promise<never>(() => {});
}

async function managed(): Promise<number> {
  const say: Say = (line) => process.stdout.write(`${line}\n`);
  const order = await message<StartOrder>('start');
  // Every phase change and progress step goes to the launcher, whose deadlines name the phase a
  // bidder is stuck in. Progress is sent at most every 200 ms (a phase change always).
  let lastPhase: string | undefined;
  let lastSent = 0;
  const onPhase = (u: PhaseUpdate) => {
    const now = performance.now();
    if (u.phase === lastPhase && now - lastSent < 200 && u.done < u.total) return;
    lastPhase = u.phase;
    lastSent = now;
    const m: PhaseReport = { type: 'phase', phase: u.phase, done: u.done, total: u.total };
    if (process.connected) process.send!(m);
  };
  const stall = (point: StallPoint) =>
    order.stallAt === point ? stallForever(say, `at ${point}`) : Promise.resolve();
  try {
    await stall('starting');
    const { result, phases, seat } = await bid(
      order.link,
      order.bid,
      order.waitS,
      say,
      {
        exchange: async (own) => {
          process.send!({ type: 'key', key: own });
          const keys = (await message<{ type: 'keys'; keys: string[] }>('keys')).keys;
          await stall('connecting');
          return keys;
        },
      },
      onPhase,
      // The launcher's phase deadline bounds the key exchange too, so a bidder that never
      // answers is named by the others rather than by the launcher's backstop.
      { beforeSecuring: () => stall('securing'), handshakeTimeoutMs: order.waitS * 1000 },
    );
    say(outcomeLine(result, seat));
    say(`phases: ${describePhases(phases)}`);
    process.send!({ type: 'result', seat, result, phases });
    await stall('exiting');
    return 0;
  } catch (err) {
    const e = (err as { explained?: ReturnType<typeof explain> }).explained ?? explain(err, 'connecting');
    process.stderr.write(`${e.title}\n  ${e.detail}\n`);
    process.send!({ type: 'failed', error: e });
    return 1;
  }
}

async function standalone(argv: string[]): Promise<number> {
  let options;
  try {
    options = parseCommandLine(argv);
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      if ((err as Error).message) process.stderr.write(`bidder: ${(err as Error).message}\n`);
      process.stderr.write(`${USAGE}\n`);
      return 2;
    }
    throw err;
  }
  const { link, bid: amount, waitS, json, yes } = options;
  const say: Say = (line) => process.stderr.write(`${line}\n`);
  const sayHuman: Say = json ? say : (line) => process.stdout.write(`${line}\n`);
  try {
    const { result, phases, seat } = await bid(link, amount, waitS, sayHuman, { yes });
    if (json) process.stdout.write(`${JSON.stringify({ ok: true, seat, ...result, phases })}\n`);
    else {
      sayHuman(outcomeLine(result, seat));
      sayHuman(`phases: ${describePhases(phases)}`);
    }
    return 0;
  } catch (err) {
    const e = (err as { explained?: ReturnType<typeof explain> }).explained ?? explain(err, 'connecting');
    if (json) process.stdout.write(`${JSON.stringify({ ok: false, error: e })}\n`);
    say(`${e.title}\n  ${e.detail}`);
    return 1;
  }
}

const argv = process.argv.slice(2);
const isManaged = argv.includes('--ipc') && typeof process.send === 'function';
try {
  process.exitCode = isManaged ? await managed() : await standalone(argv);
} catch (err) {
  process.stderr.write(`bidder: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exitCode = 1;
} finally {
  if (isManaged) process.disconnect?.();
}
