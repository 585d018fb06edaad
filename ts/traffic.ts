/**
 * What a session's messages cost: rounds, bytes and messages, per phase. Counted by the session
 * on its own side of the transport; nothing is added to the wire.
 *
 * **Rounds.** The latency a protocol pays on a network is set by its critical path: the longest
 * chain of messages each of which was sent after the previous one arrived. Its length in one-way
 * flights, times the one-way delay, is what the network adds to the run. A party cannot see that
 * chain alone (whether a peer's message was sent before or after it received ours is not on the
 * wire), so the session counts what it can see: for each peer, the **alternations** of this
 * party's message stream with that peer — the maximal runs of sends to it and of receives from
 * it, in the order the protocol issues them (a receive counts when it is asked for, not when it
 * arrives, so the count does not depend on timing). A round begins each time the direction
 * changes; a phase's `rounds` is the largest count over the peers, and the total is the sum of
 * the phases' (for two parties, the count of the whole operation).
 *
 * - Two parties in lockstep (each flight answers the other's previous one: `S R S R` here,
 *   `R S R S` there) get exactly the critical path in one-way flights.
 * - Two parties in general: an upper bound. Every link of a causal chain alternates direction at
 *   this party, so a chain of d messages needs d runs here. It is loose by up to 2× for
 *   symmetric exchanges, where both parties send and then receive (`S R` at both: 1 flight, 2
 *   runs).
 * - More than two parties: this party's count with its busiest peer. A chain that passes through
 *   a third party is not seen, so it is neither a bound nor the critical path; and where the
 *   protocol talks to several peers concurrently, how their messages interleave does not matter
 *   (each peer is counted apart).
 *
 * Each operation (a run, a preprocessing) is counted from its start: a flight that continues
 * across two operations counts in both. With parallel instances on sub-channels, each channel is
 * counted apart: `rounds` is the primary's (channel 0), `instanceRounds` the most of any
 * instance channel. When the primary waits for its instances, as the protocols here do, the
 * operation's critical path is at most their sum.
 *
 * **Phases.** Traffic is given to the phases the protocol reports (`progress(phase, done,
 * total)`), per channel. The Wasm side reports after the work it counts, and a module may announce
 * a phase before its work (`setup` at 0 of 1): so what moved since the channel's last report goes
 * to the next report's phase when that report counts work done (`done > 0`), else (an
 * announcement, `done = 0`) to the phase reported before it, and at the end of the operation to
 * the last phase reported. Before any report the phase is where the session is: `session-id` (the
 * exchange that agrees on a session id), `agreement` (the parameter check before every
 * operation), then `run` or `preprocess`. A round belongs to the phase that gets its first
 * message. With parallel instances each sub-channel's traffic follows that channel's reports,
 * and the sub-channels' own flow-control messages go with the channel they are about.
 *
 * **Bytes** are the transport's payload (what the protocols send, plus the sub-channel tag and
 * credit messages when the transport is split), before any secure-channel or framing overhead
 * the transport adds underneath.
 */
import { channelOfMessage } from './net/mux.js';
import type { RecvOptions, Transport } from './net/transport.js';

/** The traffic of one phase, or of all of them. */
export interface TrafficCounts {
  /** Rounds of the primary channel (see the module comment for what a round is). */
  rounds: number;
  /** The most rounds of any parallel-instance sub-channel (0 when the transport was not split). */
  instanceRounds: number;
  bytesSent: number;
  bytesReceived: number;
  messagesSent: number;
  messagesReceived: number;
}

/** A session's traffic: per phase, and in total (the sum of the phases). */
export interface Traffic {
  readonly phases: { readonly [phase: string]: Readonly<TrafficCounts> };
  readonly total: Readonly<TrafficCounts>;
}

const SEND = 1;
const RECV = 2;
type Direction = typeof SEND | typeof RECV;

function zero(): TrafficCounts {
  return { rounds: 0, instanceRounds: 0, bytesSent: 0, bytesReceived: 0, messagesSent: 0, messagesReceived: 0 };
}

const FIELDS = Object.keys(zero()) as (keyof TrafficCounts)[];

/** Traffic not yet given a phase: what moved on one channel since its last progress report. */
interface Pending {
  moved: TrafficCounts;
  /** Runs begun, by peer. */
  runs: Map<number, number>;
}

function pending(): Pending {
  return { moved: zero(), runs: new Map() };
}

/** One operation's rounds: per channel, per peer, per phase, and each (channel, peer)'s direction. */
class Runs {
  readonly #last = new Map<string, Direction>();
  /** channel → peer → phase → runs begun in it. */
  readonly #runs = new Map<number, Map<number, Map<string, number>>>();

  /** Whether a message `direction` with `peer` on `channel` begins a run. */
  begins(channel: number, peer: number, direction: Direction): boolean {
    const key = `${channel}/${peer}`;
    if (this.#last.get(key) === direction) return false;
    this.#last.set(key, direction);
    return true;
  }

  /** A copy of the runs counted so far (not of the directions). */
  copy(): Runs {
    const c = new Runs();
    for (const [channel, byPeer] of this.#runs) {
      for (const [peer, byPhase] of byPeer) for (const [phase, n] of byPhase) c.add(channel, phase, new Map([[peer, n]]));
    }
    return c;
  }

  add(channel: number, phase: string, runs: Map<number, number>): void {
    let byPeer = this.#runs.get(channel);
    if (!byPeer) this.#runs.set(channel, (byPeer = new Map()));
    for (const [peer, n] of runs) {
      let byPhase = byPeer.get(peer);
      if (!byPhase) byPeer.set(peer, (byPhase = new Map()));
      byPhase.set(phase, (byPhase.get(phase) ?? 0) + n);
    }
  }

  /** Per phase: the primary's rounds (most over peers) and the instances' (most over channels and peers). */
  perPhase(): Map<string, { rounds: number; instanceRounds: number }> {
    const out = new Map<string, { rounds: number; instanceRounds: number }>();
    for (const [channel, byPeer] of this.#runs) {
      const field = channel === 0 ? 'rounds' : 'instanceRounds';
      for (const byPhase of byPeer.values()) {
        for (const [phase, n] of byPhase) {
          let o = out.get(phase);
          if (!o) out.set(phase, (o = { rounds: 0, instanceRounds: 0 }));
          o[field] = Math.max(o[field], n);
        }
      }
    }
    return out;
  }
}

/** A session's traffic as it accumulates. */
export class TrafficLog {
  /** Bytes and messages, by phase, since the session opened. */
  readonly #moved = new Map<string, TrafficCounts>();
  /** Rounds of the operations that have ended, by phase. */
  readonly #rounds = new Map<string, { rounds: number; instanceRounds: number }>();
  /** The operation in progress: its rounds so far. */
  #runs: Runs | undefined;
  /** Per channel (0: the primary, or the whole transport when not split): its current phase. */
  #phases: string[] = ['session-id'];
  /** Per channel: what moved since its last progress report. */
  #pending: Pending[] = [pending()];
  /** Whether the transport is split into sub-channels (then rounds are counted on them). */
  #split = false;
  /** The traffic when the current (or last) operation began. */
  #start: Traffic = { phases: {}, total: zero() };

  /** An operation (or the session-id exchange) begins, in phase `phase`: rounds count from here. */
  begin(phase: string): void {
    this.end();
    this.#phases = [phase];
    this.#pending = [pending()];
    this.#runs = new Runs();
    this.#start = this.snapshot();
  }

  /** The operation in progress, if any, has ended: its traffic joins the session's. */
  end(): void {
    const runs = this.#runs;
    if (!runs) return;
    this.#settleAll();
    this.#runs = undefined;
    for (const [phase, r] of runs.perPhase()) {
      const o = this.#rounds.get(phase) ?? { rounds: 0, instanceRounds: 0 };
      this.#rounds.set(phase, { rounds: o.rounds + r.rounds, instanceRounds: o.instanceRounds + r.instanceRounds });
    }
    this.#split = false;
  }

  /**
   * The protocol reported progress `done` of `total` in `phase`, on sub-channel `channel` or
   * (undefined) on the operation as a whole; the latter names the primary's phase only while the
   * transport is not split, since the operation's progress then sums every channel's. What moved
   * since the channel's last report was this phase's work if the report counts work done
   * (`done > 0`: the Wasm side reports after the work), else the phase before's (a phase
   * announced before its work starts, `done = 0`).
   */
  enter(phase: string, channel: number | undefined, done: number): void {
    if (channel === undefined) {
      if (this.#split) return;
      channel = 0;
    }
    this.#settle(channel, done > 0 ? phase : (this.#phases[channel] ?? phase));
    this.#phases[channel] = phase;
  }

  /** The agreement is over: the operation proper (`run`, `preprocess`) begins, in a phase of that name. */
  operation(name: string): void {
    this.#settleAll();
    this.#phases = [name];
  }

  /** The transport is split into `channels` sub-channels (or joined again, with 0). */
  split(channels: number): void {
    this.#settleAll();
    this.#split = channels > 0;
    const primary = this.#phases[0]!;
    this.#phases = Array.from({ length: Math.max(1, channels) }, () => primary);
    this.#pending = this.#phases.map(() => pending());
  }

  /** Gives what moved on `channel` since its last report to `phase`. */
  #settle(channel: number, phase: string): void {
    const p = this.#pending[channel];
    if (!p) return;
    this.#pending[channel] = pending();
    this.#runs?.add(channel, phase, p.runs);
    let c = this.#moved.get(phase);
    if (!c) this.#moved.set(phase, (c = zero()));
    for (const f of FIELDS) c[f] += p.moved[f];
  }

  #settleAll(): void {
    this.#pending.forEach((_, c) => this.#settle(c, this.#phases[c] ?? this.#phases[0]!));
  }

  /**
   * `transport`, counting into this log: bytes and messages always, and rounds on channel
   * `channel` (undefined: the whole transport, whose rounds count only while it is not split).
   * Only the whole transport counts bytes (a split one's own messages carry their channel).
   */
  meter(transport: Transport, channel?: number): Transport {
    const t = transport;
    const roundsOn = () => (channel !== undefined ? channel : this.#split ? undefined : 0);
    const run = (peer: number, direction: Direction) => {
      const c = roundsOn();
      if (c === undefined || !this.#runs?.begins(c, peer, direction)) return;
      const runs = this.#pendingOf(c).runs;
      runs.set(peer, (runs.get(peer) ?? 0) + 1);
    };
    const count = (data: Uint8Array, bytes: 'bytesSent' | 'bytesReceived', messages: 'messagesSent' | 'messagesReceived') => {
      if (channel !== undefined) return;
      const moved = this.#pendingOf(this.#split ? (channelOfMessage(data) ?? 0) : 0).moved;
      moved[bytes] += data.byteLength;
      moved[messages] += 1;
    };
    return {
      party: t.party,
      parties: t.parties,
      closed: t.closed,
      send: (to, data, owned) => {
        run(to, SEND);
        count(data, 'bytesSent', 'messagesSent');
        return t.send(to, data, owned);
      },
      recv: async (from: number, options?: RecvOptions) => {
        run(from, RECV);
        const data = await t.recv(from, options);
        count(data, 'bytesReceived', 'messagesReceived');
        return data;
      },
      close: (reason) => t.close(reason),
    };
  }

  #pendingOf(channel: number): Pending {
    return (this.#pending[channel] ??= pending());
  }

  /** The traffic since the session opened (the operation in progress included, in its current phases). */
  snapshot(): Traffic {
    const phases: { [phase: string]: TrafficCounts } = {};
    const at = (phase: string) => (phases[phase] ??= zero());
    const addMoved = (phase: string, c: TrafficCounts) => {
      const o = at(phase);
      o.bytesSent += c.bytesSent;
      o.bytesReceived += c.bytesReceived;
      o.messagesSent += c.messagesSent;
      o.messagesReceived += c.messagesReceived;
    };
    const addRounds = (rounds: Map<string, { rounds: number; instanceRounds: number }>) => {
      for (const [phase, r] of rounds) {
        at(phase).rounds += r.rounds;
        at(phase).instanceRounds += r.instanceRounds;
      }
    };
    for (const [phase, c] of this.#moved) addMoved(phase, c);
    addRounds(this.#rounds);
    if (this.#runs) {
      // The unsettled part as if settled now (in each channel's current phase), on a copy.
      const runs = this.#runs.copy();
      this.#pending.forEach((p, c) => {
        const phase = this.#phases[c] ?? this.#phases[0]!;
        addMoved(phase, p.moved);
        runs.add(c, phase, p.runs);
      });
      addRounds(runs.perPhase());
    }
    return { phases, total: sum(Object.values(phases)) };
  }

  /** The traffic of the operation in progress, or of the last one. */
  lastOperation(): Traffic {
    return difference(this.snapshot(), this.#start);
  }
}

function sum(counts: readonly TrafficCounts[]): TrafficCounts {
  const total = zero();
  for (const c of counts) for (const f of FIELDS) total[f] += c[f];
  return total;
}

/** `after − before`, phase by phase (phases with nothing in between left out). */
export function difference(after: Traffic, before: Traffic): Traffic {
  const phases: { [phase: string]: TrafficCounts } = {};
  for (const [phase, a] of Object.entries(after.phases)) {
    const b = before.phases[phase];
    const d = zero();
    for (const f of FIELDS) d[f] = a[f] - (b?.[f] ?? 0);
    if (FIELDS.some((f) => d[f] !== 0)) phases[phase] = d;
  }
  return { phases, total: sum(Object.values(phases)) };
}
