/**
 * The sealed-bid second-price (Vickrey) auction among n bidders: the function, the engines that
 * compute it, and one bidder's run through a webmpc session. Browser-safe (no Node imports), so
 * the page and the Node bidder share it.
 *
 * What is computed: bidder `i` holds a bid `b_i` (an unsigned integer of {@link BID_BITS} bits).
 * The output, revealed to every bidder, is exactly
 * - the winner: the lowest index among the highest bids (**ties go to the lowest index**), and
 * - the price: the highest bid among the *other* bidders (the second-highest bid; with a tie at
 *   the top it equals the winning bid).
 * Nothing else about the bids is revealed beyond what these two values imply.
 *
 * Two forms of the same function: a Boolean circuit ({@link vickreyCircuit}, for `authgc` and
 * `plain`) and an arithmetic program ({@link vickreyProgram}, the SDK's Vickrey program, for
 * `mascot`). Both give the same winner and price for every list of bids, ties included.
 */
import { session, type CommonOptions, type Computable, type Progress, type Session, type Transport } from 'webmpc';
import { vickreyCircuit as sdkVickreyCircuit, type Circuit } from 'webmpc/circuit';
import { vickreyAuction, type Program } from 'webmpc/program';

/** Width of a bid in bits: bids are integers in [0, 2^32). */
export const BID_BITS = 32;
/** Largest bid. */
export const MAX_BID = 2 ** BID_BITS - 1;
/** Width of the winner output (one byte: up to 256 bidders). */
export const WINNER_BITS = 8;
/** Fewest and most bidders the app offers (the signaling server allows up to 64 parties). */
export const MIN_BIDDERS = 2;
export const MAX_BIDDERS = 16;

/** The engines the auction can run on: one webmpc protocol each. */
export type EngineName = 'authgc' | 'mascot' | 'plain';

export interface Engine {
  readonly name: EngineName;
  /** The protocol name `Session.run` takes. */
  readonly protocol: string;
  /** What people see in the engine picker. */
  readonly label: string;
  /** One sentence on what it protects against. */
  readonly security: string;
  /** Whether the SDK this app was built with has the protocol. */
  readonly available: boolean;
}

export const ENGINES: Readonly<Record<EngineName, Engine>> = {
  authgc: {
    name: 'authgc',
    protocol: 'authgc',
    label: 'authgc: authenticated garbling (malicious security)',
    security: 'Private and correct against any number of cheating bidders, who can only make the auction abort.',
    available: true,
  },
  mascot: {
    name: 'mascot',
    protocol: 'mascot',
    label: 'MASCOT: arithmetic secret sharing (malicious security)',
    security: 'Private and correct against any number of cheating bidders, who can only make the auction abort.',
    available: true,
  },
  plain: {
    name: 'plain',
    protocol: 'plain',
    label: 'plain: NO PRIVACY (every bid is sent in the clear; a reference for debugging)',
    security: 'No privacy at all: every bidder sees every bid. Never use it for real bids.',
    available: true,
  },
};

/** The engine a new auction uses unless told otherwise: the first available of authgc, mascot, plain. */
export const DEFAULT_ENGINE: EngineName = (['authgc', 'mascot', 'plain'] as const).find((e) => ENGINES[e].available) ?? 'plain';

/**
 * Whether people may pick `engine` (in the page, a link, the command line): it must be in this
 * build, and `plain` (no privacy) only as long as no private engine is. The auction core still
 * runs `plain` for tests that check the engines against it.
 */
export function isOffered(engine: Engine): boolean {
  if (!engine.available) return false;
  return engine.name !== 'plain' || DEFAULT_ENGINE === 'plain';
}

/** `name` as an engine, or undefined if it is not one. */
export function engineNamed(name: string | null | undefined): Engine | undefined {
  return name && Object.hasOwn(ENGINES, name) ? ENGINES[name as EngineName] : undefined;
}

/**
 * The Vickrey circuit for `bidders` bidders: input `i` is bidder i's bid (owned by party i),
 * outputs the winner index ({@link WINNER_BITS} bits) and the price ({@link BID_BITS} bits): the
 * SDK's `vickreyCircuit` (ties go to the lowest index; about 5·{@link BID_BITS} AND gates per
 * bidder after the first).
 */
export function vickreyCircuit(bidders: number): Circuit {
  checkBidders(bidders);
  return sdkVickreyCircuit({ bidders, bits: BID_BITS, winnerBits: WINNER_BITS });
}

/**
 * The Vickrey auction as an arithmetic program for `bidders` bidders (the SDK's
 * `vickreyAuction`, run by `mascot`): bid i is a {@link BID_BITS}-bit unsigned integer input by
 * party i, range-checked bit by bit by the protocol; the outputs, to every bidder, are the
 * winner's index and the price. A tournament of strict comparisons in which the higher-indexed
 * side wins a match only with a strictly higher bid, so ties go to the lowest index as in
 * {@link vickreyCircuit}.
 */
export function vickreyProgram(bidders: number): Promise<Program> {
  checkBidders(bidders);
  return vickreyAuction({ parties: bidders, bids: bidders, bits: BID_BITS });
}

/** The auction's result as every bidder learns it. */
export interface AuctionOutcome {
  /** Index of the winning bidder. */
  winner: number;
  /** What the winner pays: the highest bid among the other bidders. */
  price: number;
}

/** The same function in the clear, for tests and for checking the engines against each other. */
export function vickreyReference(bids: readonly number[]): AuctionOutcome {
  checkBidders(bids.length);
  let winner = 0;
  for (let i = 1; i < bids.length; i++) if (bids[i]! > bids[winner]!) winner = i;
  const price = Math.max(...bids.filter((_, i) => i !== winner));
  return { winner, price };
}

/** `bid` as the big-endian bytes the session takes; throws on anything but an integer in [0, MAX_BID]. */
export function encodeBid(bid: number): Uint8Array {
  if (!isBid(bid)) throw new RangeError(`a bid must be an integer from 0 to ${MAX_BID}`);
  const out = new Uint8Array(BID_BITS / 8);
  new DataView(out.buffer).setUint32(0, bid, false);
  return out;
}

/** Whether `x` is a valid bid. */
export function isBid(x: unknown): x is number {
  return Number.isSafeInteger(x) && (x as number) >= 0 && (x as number) <= MAX_BID;
}

/** Parses a bid typed by a person or given on a command line: decimal digits only. */
export function parseBid(text: string): number | undefined {
  const t = text.trim();
  if (!/^\d{1,10}$/.test(t)) return undefined;
  const n = Number(t);
  return isBid(n) ? n : undefined;
}

/** The session's outputs as an {@link AuctionOutcome}; throws if they are not what the circuit gives. */
export function decodeOutcome(outputs: readonly (Uint8Array | undefined)[], bidders: number): AuctionOutcome {
  const [w, p] = outputs;
  if (outputs.length !== 2 || !w || !p || w.length !== WINNER_BITS / 8 || p.length !== BID_BITS / 8) {
    throw new Error('the auction produced outputs of an unexpected shape');
  }
  const winner = w[0]!;
  if (winner >= bidders) throw new Error(`the auction named bidder ${winner}, but there are only ${bidders}`);
  return { winner, price: new DataView(p.buffer, p.byteOffset, 4).getUint32(0, false) };
}

/**
 * The Vickrey program's outputs (decoded by `Program.decodeOutputs`: winner index, price) as an
 * {@link AuctionOutcome}; throws if they are not what the program gives.
 */
export function decodeProgramOutcome(values: readonly (bigint | undefined)[], bidders: number): AuctionOutcome {
  const [w, p] = values;
  if (values.length !== 2 || w === undefined || p === undefined) throw new Error('the auction produced outputs of an unexpected shape');
  if (w < 0n || w >= BigInt(bidders)) throw new Error(`the auction named bidder ${w}, but there are only ${bidders}`);
  if (p < 0n || p > BigInt(MAX_BID)) throw new Error('the auction produced a price that is not a bid');
  return { winner: Number(w), price: Number(p) };
}

function checkBidders(n: number): void {
  if (!Number.isInteger(n) || n < MIN_BIDDERS || n > MAX_BIDDERS) {
    throw new RangeError(`an auction needs ${MIN_BIDDERS} to ${MAX_BIDDERS} bidders`);
  }
}

// -------------------------------------------------------------------------------------------
// Phases: what a person watches, with the time and bytes of each.
// -------------------------------------------------------------------------------------------

/**
 * The stages of one bidder's auction, in order. The first four are the app's (`confirming` only
 * where people compare codes); the rest are the protocol's own phases as the session reports them (`setup`, `preprocessing`, `evaluating`,
 * `output`, or a name of the protocol's).
 */
export type AuctionPhase = 'connecting' | 'securing' | 'confirming' | 'session' | (string & {});

/** Human names for the phases, for the UI and the command line. */
export const PHASE_LABELS: Readonly<Record<string, string>> = {
  connecting: 'connecting to the other bidders',
  securing: 'secure channels (key exchange)',
  confirming: 'comparing the codes',
  session: 'agreeing on the session',
  setup: 'setup (base OTs, OT extension)',
  preprocessing: 'preprocessing',
  evaluating: 'evaluating the auction',
  output: 'opening the result',
  // mascot's phases: preprocessing in two steps (random shared bits for the comparisons, made
  // from triples, then the multiplication triples), then 'evaluating'.
  bits: 'preprocessing: random shared bits (for the comparisons)',
  triples: 'preprocessing: multiplication triples',
  // authgc's phases (the paper's names).
  'function-independent preprocessing': 'preprocessing (authenticated AND triples)',
  'function-dependent preprocessing': 'garbling the auction circuit',
  online: 'evaluating the auction',
};

export function phaseLabel(phase: string): string {
  return PHASE_LABELS[phase] ?? phase;
}

/**
 * Where the launcher's testing option `--stall SEAT:POINT` can stop a scripted Node bidder (it then
 * waits forever, alive): before it starts, before it joins the room, before the secure handshake,
 * and after its result instead of exiting. Each is a point where a real bidder could hang, and
 * each has a deadline that must name it (`tests/cli/demo.test.ts`).
 */
export const STALL_POINTS = ['starting', 'connecting', 'securing', 'exiting'] as const;
export type StallPoint = (typeof STALL_POINTS)[number];

/** Time and traffic of one phase. */
export interface PhaseRecord {
  phase: AuctionPhase;
  /** Wall-clock milliseconds from entering the phase to leaving it. */
  ms: number;
  /** Bytes this bidder sent in it, where known (the session counts them; connecting does not). */
  bytesSent: number | undefined;
}

/** What the UI hears while the auction runs. */
export interface PhaseUpdate {
  phase: AuctionPhase;
  /** Work done in the phase out of `total` (0/0 when the phase has no measure). */
  done: number;
  total: number;
}

/**
 * Records when each phase starts and ends and what was sent in it. Phases are entered in order;
 * entering one ends the previous.
 */
export class PhaseClock {
  readonly #records: PhaseRecord[] = [];
  #current: { phase: AuctionPhase; start: number; bytesAtStart: number | undefined } | undefined;
  #onUpdate: ((u: PhaseUpdate) => void) | undefined;

  constructor(onUpdate?: (u: PhaseUpdate) => void) {
    this.#onUpdate = onUpdate;
  }

  /** The phase under way (or the last one, once finished). */
  get phase(): AuctionPhase | undefined {
    return this.#current?.phase ?? this.#records.at(-1)?.phase;
  }

  /** Enters `phase` (ending the current one), with the session's byte counter if known. */
  enter(phase: AuctionPhase, bytesSent?: number): void {
    if (this.#current?.phase === phase) return;
    this.end(bytesSent);
    this.#current = { phase, start: performance.now(), bytesAtStart: bytesSent };
    this.#update({ phase, done: 0, total: 0 });
  }

  /**
   * A progress report from the session (one run, whose byte counter starts at 0): enters its
   * phase if new, and passes the fraction on.
   */
  progress(p: Progress): void {
    this.enter(p.phase, p.bytesSent);
    this.#update({ phase: p.phase, done: p.done, total: p.total });
  }

  /** Ends the current phase. */
  end(bytesSent?: number): void {
    const c = this.#current;
    if (!c) return;
    this.#current = undefined;
    const bytes = c.bytesAtStart !== undefined && bytesSent !== undefined ? bytesSent - c.bytesAtStart : undefined;
    this.#records.push({ phase: c.phase, ms: performance.now() - c.start, bytesSent: bytes });
  }

  /** The finished phases, in order. */
  get records(): readonly PhaseRecord[] {
    return this.#records;
  }

  #update(u: PhaseUpdate): void {
    try {
      this.#onUpdate?.(u);
    } catch {
      // A failing display must not fail the auction.
    }
  }
}

// -------------------------------------------------------------------------------------------
// One bidder's run.
// -------------------------------------------------------------------------------------------

export interface BidOptions {
  /** The (secure) transport among the bidders; bidder i is party i. */
  transport: Transport;
  bid: number;
  engine: EngineName;
  /** Receives the phases; `connecting`/`securing` are entered by the caller before this. */
  clock: PhaseClock;
  signal?: AbortSignal | undefined;
}

/** The outcome, with this bidder's view of the costs. */
export interface AuctionResult extends AuctionOutcome {
  engine: EngineName;
  bidders: number;
  /** What the engine computed, in its own unit ("288 AND gates", "1234 triples and 190 random bits"). */
  size: string;
  /** Bytes this bidder sent through the session (all phases after `securing`). */
  bytesSent: number;
}

/** What one engine runs for the auction, with this bidder's input and how to read the outputs. */
interface Computation {
  target: Computable;
  inputs: Uint8Array[];
  decode(outputs: readonly (Uint8Array | undefined)[]): AuctionOutcome;
  size: string;
  /**
   * Work the engine does in the session before the run, phase by phase (`mascot`: setup, then
   * the random bits and the triples the program needs); `enter` starts a phase with its total.
   */
  prepare?(s: Session, enter: (phase: AuctionPhase, total: number) => void, options: CommonOptions): Promise<void>;
  /** The run's own phase (entered before the run, so the run's silent start is counted in it). */
  runPhase?: { phase: AuctionPhase; total: number };
}

/**
 * Triples per MASCOT preprocessing batch for a need of `count`: about 8 batches, so the page's
 * bar moves in steps a person can follow, each a multiple of 32 from 32 to the SDK's default
 * of 1024 (a batch's cost is a few round trips; the work per triple does not depend on it).
 */
export function mascotBatch(count: number): number {
  return Math.min(1024, Math.max(32, 32 * Math.ceil(count / 8 / 32)));
}

/** The auction as `engine` computes it, for `bidders` bidders, with bidder `party`'s `bid`. */
async function computation(engine: Engine, bidders: number, party: number, bid: number): Promise<Computation> {
  if (engine.name === 'mascot') return mascotComputation(bidders, party, bid);
  const circuit = vickreyCircuit(bidders);
  return {
    target: circuit,
    inputs: [encodeBid(bid)],
    decode: (outputs) => decodeOutcome(outputs, bidders),
    size: `${circuit.andCount} AND gates`,
  };
}

/**
 * The auction on `mascot`: the Vickrey program, with its preprocessing run in steps so every
 * phase is timed and shown as it happens. Left to `run`, the SDK would generate everything in
 * one call whose progress arrives only at the end of each batch; here each step is a
 * `Session.preprocess` of its own, all of them input-independent (no bid is used before the
 * run, whose parameter agreement then compares the program itself):
 * `setup` (base OTs and COPE with every other bidder; fixes the batch size), `bits` (the random
 * shared bits the comparisons use, each made from a triple), `triples` (topped up to what the
 * program needs), then `evaluating` (inputs, range checks, the program, the MAC check, outputs).
 */
async function mascotComputation(bidders: number, party: number, bid: number): Promise<Computation> {
  if (!isBid(bid)) throw new RangeError(`a bid must be an integer from 0 to ${MAX_BID}`);
  const program = await vickreyProgram(bidders);
  const need = program.requirements();
  return {
    target: program,
    inputs: program.encodeInputs(party, [bid]),
    decode: (outputs) => decodeProgramOutcome(program.decodeOutputs([...outputs]), bidders),
    size: `${need.triples} triples and ${need.bits} random bits`,
    async prepare(s, enter, options) {
      await s.preprocess('mascot', { ...options, batch: mascotBatch(Math.max(need.triples, need.bits)) });
      enter('bits', need.bits);
      await s.preprocess('mascot', { ...options, bits: need.bits });
      enter('triples', need.triples);
      await s.preprocess('mascot', { ...options, program });
    },
    runPhase: { phase: 'evaluating', total: program.instructions },
  };
}

/**
 * Runs the auction as bidder `transport.party`: opens a session, runs the engine's protocol on
 * the Vickrey function with this bidder's bid, and closes the session (and with it the
 * transport). On failure the session has already closed the transport with the error, so every
 * other bidder's run fails at once too; the error is rethrown as is (typed, with `code`).
 */
export async function placeBid(options: BidOptions): Promise<AuctionResult> {
  const { transport, bid, clock, signal } = options;
  const engine = ENGINES[options.engine];
  const bidders = transport.parties;
  const party = transport.party;
  const job = await computation(engine, bidders, party, bid);
  clock.enter('session', 0);
  const s = await session({ transport, party, parties: bidders });
  try {
    // The session's byte counter starts here: the phase `session` gets the parameter agreement.
    // Bytes are the session's (all operations), not one operation's.
    const enter = (phase: AuctionPhase, total: number) =>
      clock.progress({ phase, done: 0, total, gatesDone: 0, gatesTotal: 0, bytesSent: s.bytesSent });
    const common: CommonOptions = {
      ...(signal ? { signal } : {}),
      onProgress: (p) => clock.progress({ ...p, bytesSent: s.bytesSent }),
    };
    await job.prepare?.(s, enter, common);
    if (job.runPhase) enter(job.runPhase.phase, job.runPhase.total);
    const outputs = await s.run(job.target, {
      ...common,
      inputs: job.inputs,
      // The protocol is the engine's; the SDK's static type lists only the protocols it was built with.
      protocol: engine.protocol as 'plain',
    });
    clock.end(s.bytesSent);
    return { ...job.decode(outputs), engine: engine.name, bidders, size: job.size, bytesSent: s.bytesSent };
  } finally {
    await s.close();
  }
}
