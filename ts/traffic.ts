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
 * changes; `rounds` is the largest count over the peers.
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
 * **Phases.** Traffic is attributed to the phase the protocol last reported on that channel
 * (`progress(phase, ...)`), and outside any to where the session is: `session-id` (the exchange
 * that agrees on a session id), `agreement` (the parameter check before every operation), then
 * `run` or `preprocess` until the protocol names a phase, and again after a phase reports itself
 * complete (done = total) until the next report. A round belongs to the
 * phase in which its first message moved; bytes to the phase current when they moved. With
 * parallel instances the bytes of each sub-channel go to that channel's phase, and the
 * sub-channels' own flow-control messages to the phase of the channel they are about.
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

/** One operation's direction runs: per channel, per peer, per phase. */
class Runs {
  readonly #last = new Map<string, Direction>();
  /** channel → peer → phase → runs begun in it. */
  readonly #runs = new Map<number, Map<number, Map<string, number>>>();

  note(channel: number, peer: number, direction: Direction, phase: string): void {
    const key = `${channel}/${peer}`;
    if (this.#last.get(key) === direction) return;
    this.#last.set(key, direction);
    let byPeer = this.#runs.get(channel);
    if (!byPeer) this.#runs.set(channel, (byPeer = new Map()));
    let byPhase = byPeer.get(peer);
    if (!byPhase) byPeer.set(peer, (byPhase = new Map()));
    byPhase.set(phase, (byPhase.get(phase) ?? 0) + 1);
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
  #runs: Runs | undefined;
  /** The phase of each channel (channel 0 is the primary, or the whole transport when not split). */
  #phases: string[] = ['session-id'];
  /** Whether the transport is split into sub-channels (then rounds are counted on them). */
  #split = false;
  /** The name of the operation in progress, for traffic outside any phase the protocol reported. */
  #operation = 'session-id';
  /** The traffic when the current (or last) operation began. */
  #start: Traffic = { phases: {}, total: zero() };

  /** An operation begins in `phase` (its rounds are counted from here). */
  begin(phase: string): void {
    this.end();
    this.#operation = phase;
    this.#phases = [phase];
    this.#runs = new Runs();
    this.#start = this.snapshot();
  }

  /** The operation in progress, if any, has ended: its rounds join the session's. */
  end(): void {
    const runs = this.#runs;
    if (!runs) return;
    this.#runs = undefined;
    for (const [phase, r] of runs.perPhase()) {
      const o = this.#rounds.get(phase) ?? { rounds: 0, instanceRounds: 0 };
      this.#rounds.set(phase, { rounds: o.rounds + r.rounds, instanceRounds: o.instanceRounds + r.instanceRounds });
    }
    this.#split = false;
  }

  /**
   * The protocol reported `phase` on sub-channel `channel`, or (undefined) on the operation as a
   * whole: that names the primary's phase only while the transport is not split, since the
   * operation's progress then sums every channel's.
   */
  enter(phase: string, channel?: number, done?: number, total?: number): void {
    if (channel === undefined) {
      if (this.#split) return;
      channel = 0;
    }
    // A phase that reports itself complete owns nothing after: what follows, until the next
    // report, belongs to the operation (a protocol need not announce its next phase at once).
    const complete = done !== undefined && total !== undefined && total > 0 && done >= total;
    this.#phases[channel] = complete ? this.#operation : phase;
  }

  /** The agreement is over: the operation (`run`, `preprocess`) proper begins. */
  operation(name: string): void {
    this.#operation = name;
    this.#phases = [name];
  }

  /** The transport is split into `channels` sub-channels (or joined again, with 0). */
  split(channels: number): void {
    this.#split = channels > 0;
    const primary = this.#phases[0]!;
    this.#phases = Array.from({ length: Math.max(1, channels) }, () => primary);
  }

  /**
   * `transport`, counting into this log: bytes and messages always, and rounds on channel
   * `channel` (undefined: the whole transport, whose rounds count only while it is not split).
   */
  meter(transport: Transport, channel?: number): Transport {
    const t = transport;
    const countsRounds = () => (channel === undefined ? !this.#split : true);
    const phaseOf = (data: Uint8Array) => {
      // A split transport's own messages carry their channel; a channel's are its own.
      const c = channel ?? (this.#split ? (channelOfMessage(data) ?? 0) : 0);
      return this.#phases[c] ?? this.#phases[0]!;
    };
    const bytes = channel === undefined;
    return {
      party: t.party,
      parties: t.parties,
      closed: t.closed,
      send: (to, data, owned) => {
        if (countsRounds()) this.#runs?.note(channel ?? 0, to, SEND, this.#phases[channel ?? 0]!);
        if (bytes) this.#count(phaseOf(data), 'bytesSent', 'messagesSent', data.byteLength);
        return t.send(to, data, owned);
      },
      recv: async (from: number, options?: RecvOptions) => {
        if (countsRounds()) this.#runs?.note(channel ?? 0, from, RECV, this.#phases[channel ?? 0]!);
        const data = await t.recv(from, options);
        if (bytes) this.#count(phaseOf(data), 'bytesReceived', 'messagesReceived', data.byteLength);
        return data;
      },
      close: (reason) => t.close(reason),
    };
  }

  #count(phase: string, bytes: 'bytesSent' | 'bytesReceived', messages: 'messagesSent' | 'messagesReceived', n: number): void {
    let c = this.#moved.get(phase);
    if (!c) this.#moved.set(phase, (c = zero()));
    c[bytes] += n;
    c[messages] += 1;
  }

  /** The traffic since the session opened (the operation in progress included). */
  snapshot(): Traffic {
    const phases: { [phase: string]: TrafficCounts } = {};
    const at = (phase: string) => (phases[phase] ??= zero());
    for (const [phase, c] of this.#moved) Object.assign(at(phase), c, { rounds: 0, instanceRounds: 0 });
    const add = (rounds: Map<string, { rounds: number; instanceRounds: number }>) => {
      for (const [phase, r] of rounds) {
        at(phase).rounds += r.rounds;
        at(phase).instanceRounds += r.instanceRounds;
      }
    };
    add(this.#rounds);
    if (this.#runs) add(this.#runs.perPhase());
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
