/**
 * Oblivious transfer between two parties over any {@link Transport}: KOS malicious OT extension
 * (Masny–Rindal base OTs on ristretto255, the revised KOS consistency check, TCCR hashing with
 * per-OT tweaks). All cryptography runs in Rust/Wasm (`wasm/crates/ot`); this module checks
 * arguments, reshapes bytes, splits work over instances and maps errors.
 *
 * ```ts
 * const [a, b] = createMemoryTransports(2);
 * const sid = crypto.getRandomValues(new Uint8Array(32));           // both parties agree on it
 * const [s, r] = await Promise.all([otSender({ transport: a, peer: 1, sessionId: sid }),
 *                                   otReceiver({ transport: b, peer: 0, sessionId: sid })]);
 * const [pairs, got] = await Promise.all([s.sendRandom(1000), r.receiveRandom(1000)]);
 * ```
 *
 * Set-up: before any OT message the two parties exchange and compare a small record of public
 * parameters (which party sends, the session id, `threads`); a difference rejects both set-ups
 * with `PARAMETER_MISMATCH` and leaves the transport open and in step.
 *
 * Parallel instances (`threads: k`, default 1; both parties must give the same k): with k > 1
 * the OT extension is k independent KOS instances, each in an engine worker of its own (its own
 * Wasm instance), talking over sub-channel i of the transport (`splitTransport`, towards `peer`
 * only; no SharedArrayBuffer, no second connection). Every instance runs in a worker, instance 0
 * too: this thread then only routes bytes (its mux pumps and the workers' sends and receives),
 * and a KOS chunk computed here would hold up every other instance's messages behind it. Each
 * call of n OTs is cut into k contiguous chunks (instance i does OTs ⌊i·n/k⌋ .. ⌊(i+1)·n/k⌋, the
 * same cut at both parties; empty chunks are skipped) and the outputs are concatenated, so the
 * contract is the one of k = 1: OT j of the result is OT j of the call. Instance i uses the
 * session id SHA-256(sessionId ‖ `instance/i`), so no two instances share a key or a tweak. With
 * k = 1 the single instance runs on this thread under the caller's session id, as before.
 *
 * Δ with k > 1: every instance of a sender uses the same Δ (the caller's, or one drawn here from
 * the platform CSPRNG), so `delta` is one value and Δ-OT outputs are correlated under it across
 * chunk boundaries. That is sound because the instances' tweaks differ (distinct session ids)
 * and because of the rule below: KOS's one leakage is on Δ (see Security), a cheating receiver
 * can guess Δ bits in each instance's check, and all of its guesses across the k instances
 * survive with probability 2^−(bits guessed), exactly as if it had guessed them in one instance;
 * a wrong guess in any instance aborts that instance, which fails the call, closes the transport
 * and ends every instance, and the Δ drawn here is wiped — nothing is ever computed under that Δ
 * again. A Δ drawn here is random, secret and discarded after any abort, the conditions under
 * which hashed outputs may use a given Δ; a caller's Δ keeps its caller's rules (below).
 *
 * Security: KOS is secure against a malicious sender or receiver, with abort. Its one known,
 * tolerable leakage is that a cheating receiver can guess bits of the sender's Δ, each guess
 * being caught with probability ½; so **a Δ must never be used again after an abort**. The
 * simplest way to keep that rule is to let each sender draw its own random Δ (omit `delta`).
 * A caller-chosen `delta` (e.g. one global Δ shared by a party's instances towards several peers)
 * must be nonzero and serves Δ-OT only (`sendCot`/`receiveCot`); random, correlated and
 * chosen-message OT on it are refused with `INVALID_ARGUMENT` unless the caller opts in with
 * `allowHashedWithChosenDelta`, vouching that the Δ is random, secret and discarded after any
 * abort of any instance that held it (with k > 1: after any failed call of this sender).
 *
 * Failure: a peer that cheats (fails the consistency check) or sends malformed messages makes the
 * call reject with {@link ProtocolAbort}; the OT instance is then unusable and this module closes
 * the transport, so the peer aborts too instead of waiting out its timeout. Network failures
 * reject with the transport's own {@link TransportError}. With k > 1 the instances share fate:
 * a failure of any one (a verdict, a transport failure, a worker's death) closes the transport
 * with its error, every other instance here and at the peer fails at once, the call rejects
 * with the verdict if there is one (else the transport's error), and every worker ends; the
 * transport closing under idle instances ends them too. Sub-channels wait at most 60 s for a
 * message (the transport's own deadline does not carry over to them).
 */
import { concatBytes } from './bytes.js';
import { ProtocolAbort, TransportError, WebmpcError, fromWasmError } from './errors.js';
import { compiledModule, wasm } from './engine/wasm.js';
import { EngineWorker, type OperationHooks } from './engine/worker-host.js';
import type { OtMethod } from './engine/worker-protocol.js';
import { splitTransport, type Mux } from './net/mux.js';
import type { Transport } from './net/transport.js';
import { agree, type ParameterRecord } from './protocols/agreement.js';
import { instanceSessionId } from './protocols/util.js';

/** Bytes of one OT message (a 128-bit block). */
export const OT_MESSAGE_BYTES = 16;
/** Most OTs one call accepts; call repeatedly for more (memory stays bounded per call). */
export const MAX_OTS_PER_CALL = 1 << 24;

export interface OtOptions {
  transport: Transport;
  /** The other party's index on the transport. */
  peer: number;
  /**
   * 32 bytes both parties agree on, unique per OT instance (it is hashed into every key and
   * tweak). Derive it from your session's id, e.g. a hash of the room id and a counter.
   */
  sessionId: Uint8Array;
  /**
   * How many independent KOS instances run this OT extension, each in an engine worker of its
   * own over a sub-channel of the transport (default 1: one instance on this thread). Both
   * parties must give the same number: it is compared before any OT message, and a difference
   * rejects both set-ups with `PARAMETER_MISMATCH`. At most {@link MAX_OT_THREADS}.
   */
  threads?: number;
}

/** Most {@link OtOptions.threads} one OT extension accepts. */
export const MAX_OT_THREADS = 64;

export interface OtSenderOptions extends OtOptions {
  /**
   * Δ for Δ-OT (16 bytes, not all zero); random if omitted. A Δ given here serves Δ-OT only
   * unless `allowHashedWithChosenDelta` is set. Never reuse a Δ once any instance holding it has
   * aborted: each abort can cost a bit of it.
   */
  delta?: Uint8Array;
  /**
   * Explicit opt-in: allow random, correlated and chosen-message OT on the caller's `delta`. A
   * receiver that learns Δ learns both messages of every such OT, so set this only for a Δ that
   * is uniformly random, secret, and discarded after any abort. Ignored without `delta` (a
   * random Δ allows every kind).
   */
  allowHashedWithChosenDelta?: boolean;
}

type RawSender = import('./wasm-gen/webmpc.js').OtSenderSession;
type RawReceiver = import('./wasm-gen/webmpc.js').OtReceiverSession;

function checkCount(n: number): void {
  if (!Number.isSafeInteger(n) || n < 0 || n > MAX_OTS_PER_CALL) {
    throw new WebmpcError('INVALID_ARGUMENT', `OT count must be an integer in [0, ${MAX_OTS_PER_CALL}]`);
  }
}

function checkChoices(choices: Uint8Array): void {
  if (!(choices instanceof Uint8Array)) throw new WebmpcError('INVALID_ARGUMENT', 'choices must be a Uint8Array');
  checkCount(choices.length);
  for (let i = 0; i < choices.length; i++) {
    if (choices[i]! > 1) throw new WebmpcError('INVALID_ARGUMENT', 'choices must hold 0 or 1 per OT');
  }
}

function checkBlocks(what: string, bytes: Uint8Array, blocksPerOt: number): number {
  if (!(bytes instanceof Uint8Array) || bytes.length % (OT_MESSAGE_BYTES * blocksPerOt) !== 0) {
    throw new WebmpcError('INVALID_ARGUMENT', `${what} must be a Uint8Array of ${OT_MESSAGE_BYTES * blocksPerOt} bytes per OT`);
  }
  const n = bytes.length / (OT_MESSAGE_BYTES * blocksPerOt);
  checkCount(n);
  return n;
}

function checkSetup(o: OtOptions): void {
  if (!(o.sessionId instanceof Uint8Array) || o.sessionId.length !== 32) {
    throw new WebmpcError('INVALID_ARGUMENT', 'sessionId must be 32 bytes');
  }
  const { party, parties } = o.transport;
  if (!Number.isInteger(o.peer) || o.peer < 0 || o.peer >= parties || o.peer === party) {
    throw new WebmpcError('INVALID_ARGUMENT', `peer must be another party's index in [0, ${parties})`);
  }
}

/** Runs a Wasm protocol call; on a protocol verdict, closes the transport so the peer aborts too. */
async function run<T>(transport: Transport, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    const e = fromWasmError(err);
    if (e instanceof ProtocolAbort && e.code !== 'PARAMETER_MISMATCH') await transport.close(e);
    throw e;
  }
}

/**
 * Splits `m0 ‖ m1` per OT (the chunks' results, in order) into two arrays. Word by word where the
 * bytes are 4-aligned (fresh arrays from Wasm always are): this runs on the caller's thread for
 * every random OT, and with parallel instances that thread is on every call's critical path.
 */
function split(parts: readonly Uint8Array[]): { m0: Uint8Array; m1: Uint8Array } {
  const n = parts.reduce((t, p) => t + p.length, 0) / (2 * OT_MESSAGE_BYTES);
  const m0 = new Uint8Array(n * OT_MESSAGE_BYTES);
  const m1 = new Uint8Array(n * OT_MESSAGE_BYTES);
  const w0 = new Uint32Array(m0.buffer);
  const w1 = new Uint32Array(m1.buffer);
  let at = 0; // OTs written so far
  for (const pairs of parts) {
    const count = pairs.length / (2 * OT_MESSAGE_BYTES);
    if (pairs.byteOffset % 4 === 0) {
      const w = new Uint32Array(pairs.buffer, pairs.byteOffset, pairs.length / 4);
      for (let j = 0; j < count; j++) {
        const src = 8 * j;
        const dst = 4 * (at + j);
        w0[dst] = w[src]!;
        w0[dst + 1] = w[src + 1]!;
        w0[dst + 2] = w[src + 2]!;
        w0[dst + 3] = w[src + 3]!;
        w1[dst] = w[src + 4]!;
        w1[dst + 1] = w[src + 5]!;
        w1[dst + 2] = w[src + 6]!;
        w1[dst + 3] = w[src + 7]!;
      }
    } else {
      for (let j = 0; j < count; j++) {
        m0.set(pairs.subarray(32 * j, 32 * j + 16), 16 * (at + j));
        m1.set(pairs.subarray(32 * j + 16, 32 * j + 32), 16 * (at + j));
      }
    }
    at += count;
  }
  return { m0, m1 };
}

/** The chunks' outputs as one array: a single chunk's own (fresh from the Wasm), else a copy. */
function joined(parts: readonly Uint8Array[]): Uint8Array {
  return parts.length === 1 ? parts[0]! : concatBytes(parts);
}

/** The OTs of chunk `i` of `k` when `n` OTs are split into contiguous chunks: `[lo, hi)`. */
function chunk(n: number, k: number, i: number): [number, number] {
  return [Math.floor((i * n) / k), Math.floor(((i + 1) * n) / k)];
}

/** A call's argument for the OTs `[lo, hi)`: a count, or the bytes of those OTs. */
type Slice = (lo: number, hi: number) => number | Uint8Array;

/** How an OT object runs its calls: one instance on this thread, or `k` in engine workers. */
interface Lanes {
  /** Runs `method` on OTs `[0, n)`; with k lanes, lane i does chunk i and `join` gets their results in order. */
  run<T>(n: number, method: OtMethod, arg: Slice, join: (parts: unknown[]) => T): Promise<T>;
  /** The derived session id of each instance (tests). */
  readonly sessionIds: readonly Uint8Array[];
  close(): Promise<void>;
}

/** k = 1: the Wasm instance on this thread, as before threads existed. */
class InThread implements Lanes {
  constructor(
    readonly raw: RawSender | RawReceiver,
    readonly transport: Transport,
    readonly sessionIds: readonly Uint8Array[],
  ) {}

  run<T>(n: number, method: OtMethod, arg: Slice, join: (parts: unknown[]) => T): Promise<T> {
    const f = (this.raw as unknown as Record<OtMethod, (a: number | Uint8Array) => Promise<unknown>>)[method];
    return run(this.transport, async () => join([await f.call(this.raw, arg(0, n))]));
  }

  async close(): Promise<void> {
    this.raw.free();
  }
}

/**
 * Whether an instance's failure needs no abort: a refusal of the arguments (`INVALID_ARGUMENT`)
 * or of a call on an instance that refused before (`BUSY`: the Wasm instance does not serve
 * again after a failed call), which every instance makes alike before sending anything. The
 * transport then stays open, as with one instance.
 */
function refusal(err: unknown): boolean {
  return err instanceof WebmpcError && (err.code === 'INVALID_ARGUMENT' || err.code === 'BUSY');
}

/** The error a failed call reports: a protocol verdict before a transport failure before the rest. */
function firstCause(errors: readonly unknown[]): unknown {
  return errors.find((e) => e instanceof ProtocolAbort) ?? errors.find((e) => e instanceof TransportError) ?? errors[0];
}

/**
 * k > 1: instance i in engine worker i, over sub-channel i of the transport (towards `peer`
 * only), with session id SHA-256(sessionId ‖ `instance/i`). The instances share fate: a failure
 * of one (a verdict, a transport failure, a worker's death) closes the transport with its error,
 * so every other instance here and at the peer fails at once, and ends every worker.
 */
class Threaded implements Lanes {
  readonly #workers: readonly EngineWorker[];
  readonly #mux: Mux;
  readonly #transport: Transport;
  #busy = false;
  #failed: unknown;
  #closed = false;
  /** Wiped when the instances end (the sender's Δ, held for its getter). */
  readonly secrets: Uint8Array[] = [];

  constructor(
    workers: readonly EngineWorker[],
    mux: Mux,
    transport: Transport,
    readonly sessionIds: readonly Uint8Array[],
  ) {
    this.#workers = workers;
    this.#mux = mux;
    this.#transport = transport;
    // The transport closing under idle instances (its owner closed it, the peer aborted) ends
    // them too: their sub-channels are gone, and their workers must not linger.
    void transport.closed.then((reason) => {
      if (!this.#closed) void this.#abort(reason ?? new TransportError('CLOSED', 'the transport under the OT instances closed'));
    });
  }

  #hooks(i: number): OperationHooks {
    return { transport: this.#mux.channels[i]!, progress: () => {} };
  }

  /**
   * Runs op(i) in every lane i of `lanes` at once. On any failure but a refusal every instance
   * makes alike, fails everything: the call rejects with the first verdict (else the first
   * transport error, else the first error), and once every lane has settled the workers end.
   */
  async #all(lanes: readonly number[], op: (i: number) => Promise<unknown>): Promise<unknown[]> {
    this.#busy = true;
    let settled: PromiseSettledResult<unknown>[];
    try {
      settled = await Promise.allSettled(
        lanes.map((i) =>
          op(i).catch((err: unknown) => {
            // The other instances must not wait for this one's peer: close the transport now.
            if (!refusal(err)) void this.#abort(err);
            throw err;
          }),
        ),
      );
    } finally {
      this.#busy = false;
    }
    const errors = settled.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    if (errors.length === 0) {
      // Every lane finished; if the transport closed meanwhile, the workers end now.
      if (this.#failed !== undefined) await this.#abort(this.#failed);
      return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value);
    }
    const cause = fromWasmError(firstCause(errors));
    if (this.#failed !== undefined || errors.length < lanes.length || !errors.every(refusal)) {
      await this.#abort(cause);
      // What this call saw is what later calls report.
      this.#failed = cause;
    }
    throw cause;
  }

  /** Sets up every instance (each runs its own 128 base OTs). */
  async setup(role: 'sender' | 'receiver', peer: number, delta: Uint8Array, allowHashed: boolean): Promise<void> {
    const { party, parties } = this.#transport;
    await this.#all(
      this.#workers.map((_, i) => i),
      (i) => {
        const copy = delta.slice();
        const done = this.#workers[i]!.perform(
          { op: 'ot-setup', ctx: { party, parties, sessionId: this.sessionIds[i]! }, peer, role, delta: copy, allowHashed },
          this.#hooks(i),
        );
        copy.fill(0); // the worker has its clone (postMessage copies at once)
        return done;
      },
    );
  }

  async run<T>(n: number, method: OtMethod, arg: Slice, join: (parts: unknown[]) => T): Promise<T> {
    if (this.#failed !== undefined) throw this.#failed;
    if (this.#closed) throw new TransportError('CLOSED', 'this OT instance was freed');
    if (this.#busy) throw new WebmpcError('BUSY', 'an OT call is already running on this instance');
    const k = this.#workers.length;
    // Both parties split n alike; empty chunks (n < k) are skipped by both.
    const lanes = [...Array(k).keys()].filter((i) => chunk(n, k, i)[1] > chunk(n, k, i)[0]);
    const parts = await this.#all(lanes, (i) => {
      const a = arg(...chunk(n, k, i));
      // A view would clone its whole buffer: send exactly the chunk, and wipe this copy.
      const copy = a instanceof Uint8Array ? a.slice() : a;
      const done = this.#workers[i]!.perform({ op: 'ot-call', method, arg: copy }, this.#hooks(i));
      if (copy instanceof Uint8Array) copy.fill(0);
      return done;
    });
    return join(parts);
  }

  /**
   * Ends everything on a failure: Δ is wiped, the transport closes with the error (so every
   * instance here and at the peer fails at once), and the workers end — at once when no call is
   * running, else when the call's lanes have all settled (ending them earlier would replace an
   * instance's verdict, on its way, with the worker's termination).
   */
  async #abort(err: unknown): Promise<void> {
    if (this.#failed === undefined) {
      const e = fromWasmError(err);
      this.#failed = e;
      this.#wipe();
      await this.#transport.close(e instanceof Error ? e : new TransportError('CLOSED', 'an OT instance failed')).catch(() => {});
    }
    if (!this.#busy) await Promise.all(this.#workers.map((w) => w.terminate()));
  }

  #wipe(): void {
    for (const s of this.secrets) s.fill(0);
  }

  /** Throws unless the instances are usable (the sender's Δ is readable only then). */
  check(): void {
    if (this.#failed !== undefined) throw this.#failed;
    if (this.#closed) throw new TransportError('CLOSED', 'this OT instance was freed');
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#wipe();
    await Promise.all(this.#workers.map((w) => w.terminate()));
    // After a failure the transport is closed already; otherwise end the sub-channels (the peer
    // does the same), leaving the transport for its owner.
    if (this.#failed === undefined) await this.#mux.close();
  }
}

/** Checks `threads` (default 1). */
function threadsOf(o: OtOptions): number {
  const k = o.threads ?? 1;
  if (!Number.isSafeInteger(k) || k < 1 || k > MAX_OT_THREADS) {
    throw new WebmpcError('INVALID_ARGUMENT', `threads must be a whole number from 1 to ${MAX_OT_THREADS}`);
  }
  return k;
}

/**
 * Compares the public parameters with the peer before any OT message: the roles, the session id
 * and the number of instances. A difference rejects both sides with `PARAMETER_MISMATCH`.
 */
async function agreeWithPeer(o: OtOptions, role: 'sender' | 'receiver', threads: number): Promise<void> {
  const { party, parties } = o.transport;
  const sender = role === 'sender' ? party : o.peer;
  const record: ParameterRecord = [
    ['operation', 'ot-extension'],
    ['protocol', 'kos'],
    ['version', 1],
    ['roles', { sender, receiver: sender === party ? o.peer : party }],
    ['sessionId', Array.from(o.sessionId, (b) => b.toString(16).padStart(2, '0')).join('')],
    ['threads', threads],
  ];
  await agree(o.transport, party, parties, record, {}, [o.peer]);
}

/**
 * Sets up the lanes of one party: agrees with the peer, then one instance here (k = 1) or k in
 * engine workers (their start-up overlaps the agreement).
 */
async function setupLanes(
  o: OtOptions,
  role: 'sender' | 'receiver',
  delta: Uint8Array,
  allowHashed: boolean,
): Promise<{ lanes: Lanes; delta?: Uint8Array }> {
  const k = threadsOf(o);
  const w = wasm();
  if (k === 1) {
    await run(o.transport, () => agreeWithPeer(o, role, 1));
    const raw = await run<RawSender | RawReceiver>(o.transport, () =>
      role === 'sender'
        ? (w.otSenderSetup(o.transport, o.peer, o.sessionId, delta, allowHashed) as Promise<RawSender>)
        : (w.otReceiverSetup(o.transport, o.peer, o.sessionId) as Promise<RawReceiver>),
    );
    return { lanes: new InThread(raw, o.transport, [o.sessionId]) };
  }
  const main = compiledModule('main');
  if (!main) throw new WebmpcError('NOT_INITIALIZED', 'webmpc: call and await init() before OT with threads');
  const starting = Array.from({ length: k }, () => EngineWorker.start({ main }));
  const stop = () => Promise.all(starting.map((p) => p.then((x) => x.terminate(), () => {})));
  let workers: EngineWorker[];
  try {
    await run(o.transport, () => agreeWithPeer(o, role, k));
    workers = await Promise.all(starting);
  } catch (err) {
    await stop();
    const e = fromWasmError(err);
    // A verdict both sides reach alone leaves the transport open (as at k = 1); anything else
    // (a worker that would not start) closes it, so the peer does not wait for us.
    if (!(e instanceof ProtocolAbort && e.code === 'PARAMETER_MISMATCH')) await o.transport.close(e instanceof Error ? e : undefined);
    throw e;
  }
  const ids = await Promise.all([...Array(k).keys()].map((i) => instanceSessionId(o.sessionId, i)));
  const mux = splitTransport(o.transport, { channels: k, peers: [o.peer] });
  const lanes = new Threaded(workers, mux, o.transport, ids);
  // Every instance uses one Δ, so the contract is the one of k = 1 (a single `delta`, Δ-OT
  // correlated under it across chunk boundaries). Without the caller's Δ it is drawn here from
  // the platform CSPRNG: random, secret, and wiped when any instance fails — the conditions
  // under which hashed outputs may use a given Δ (see the module docs).
  let d = delta;
  let hashed = allowHashed;
  if (role === 'sender' && d.length === 0) {
    const fresh = new Uint8Array(16);
    do crypto.getRandomValues(fresh);
    while (fresh.every((b) => b === 0));
    d = fresh;
    hashed = true;
  }
  if (role === 'sender') lanes.secrets.push(d);
  await lanes.setup(role, o.peer, d, hashed);
  return { lanes, ...(role === 'sender' ? { delta: d } : {}) };
}

/** Guards the constructors: instances come from {@link otSender} / {@link otReceiver} only. */
const CONSTRUCT: unique symbol = Symbol('webmpc.ot');

/** The chunks' bytes, in order. */
const joinBytes = (parts: unknown[]) => joined(parts as Uint8Array[]);

/** The sending side of an OT extension instance with one peer. */
export class OtSender {
  // ES-private, so the Wasm handle's generated types stay out of the published declarations.
  readonly #lanes: Lanes;
  readonly #delta: Uint8Array | undefined;

  /** @internal */
  constructor(token: typeof CONSTRUCT, lanes: unknown, delta: Uint8Array | undefined) {
    if (token !== CONSTRUCT) throw new TypeError('use otSender() to create an OtSender');
    this.#lanes = lanes as Lanes;
    this.#delta = delta;
  }

  /** Δ (16 bytes, this sender's secret): in Δ-OT the receiver gets `K_j ⊕ b_j·Δ`. */
  get delta(): Uint8Array {
    const lanes = this.#lanes;
    if (lanes instanceof InThread) return (lanes.raw as RawSender).delta();
    (lanes as Threaded).check();
    return this.#delta!.slice();
  }

  /** `n` random OTs: `m0`, `m1` are `16·n` bytes each (OT j at bytes `16j..16j+16`). */
  async sendRandom(n: number): Promise<{ m0: Uint8Array; m1: Uint8Array }> {
    checkCount(n);
    // Split chunk by chunk: no concatenation first.
    return this.#lanes.run(n, 'sendRandom', (lo, hi) => hi - lo, (parts) => split(parts as Uint8Array[]));
  }

  /** `n` Δ-OTs: returns the keys `K_j` (`16·n` bytes). */
  async sendCot(n: number): Promise<Uint8Array> {
    checkCount(n);
    return this.#lanes.run(n, 'sendCot', (lo, hi) => hi - lo, joinBytes);
  }

  /** Chosen-message OT: `m0` and `m1` are `16·n` bytes each; the receiver gets one per OT. */
  async sendChosen(m0: Uint8Array, m1: Uint8Array): Promise<void> {
    const n = checkBlocks('m0', m0, 1);
    if (checkBlocks('m1', m1, 1) !== n) throw new WebmpcError('INVALID_ARGUMENT', 'm0 and m1 must have equal lengths');
    const flat = new Uint8Array(32 * n);
    for (let j = 0; j < n; j++) {
      flat.set(m0.subarray(16 * j, 16 * j + 16), 32 * j);
      flat.set(m1.subarray(16 * j, 16 * j + 16), 32 * j + 16);
    }
    try {
      await this.#lanes.run(n, 'sendChosen', (lo, hi) => flat.subarray(32 * lo, 32 * hi), () => undefined);
    } finally {
      flat.fill(0);
    }
  }

  /** Correlated OT: returns random `m0` (`16·n` bytes); the receiver gets `m0_j ⊕ b_j·x_j`. */
  async sendCorrelated(correlations: Uint8Array): Promise<Uint8Array> {
    const n = checkBlocks('correlations', correlations, 1);
    return this.#lanes.run(n, 'sendCorrelated', (lo, hi) => correlations.subarray(16 * lo, 16 * hi), joinBytes);
  }

  /** @internal Tests: the session id of each KOS instance (the caller's at k = 1, derived ones above). */
  get _instanceSessionIds(): Uint8Array[] {
    return this.#lanes.sessionIds.map((x) => x.slice());
  }

  /**
   * Releases the instance: its Wasm state, and with `threads` > 1 its engine workers and its
   * sub-channels (ended gracefully: the peer closes too; the transport stays open). Resolves
   * when the peer has ended its sub-channels too (within 10 s, else `TIMEOUT`).
   */
  close(): Promise<void> {
    return this.#lanes.close();
  }

  /** Releases the instance without waiting (see {@link close}). */
  free(): void {
    void this.#lanes.close().catch(() => {});
  }
}

/** The receiving side of an OT extension instance with one peer. */
export class OtReceiver {
  readonly #lanes: Lanes;

  /** @internal */
  constructor(token: typeof CONSTRUCT, lanes: unknown) {
    if (token !== CONSTRUCT) throw new TypeError('use otReceiver() to create an OtReceiver');
    this.#lanes = lanes as Lanes;
  }

  /** `n` random OTs: random `choices` (one byte 0/1 per OT) and `m_{b_j}` (`16·n` bytes). */
  async receiveRandom(n: number): Promise<{ choices: Uint8Array; messages: Uint8Array }> {
    checkCount(n);
    return this.#lanes.run(n, 'receiveRandom', (lo, hi) => hi - lo, (parts) => {
      const p = parts as { choices: Uint8Array; messages: Uint8Array }[];
      return { choices: joined(p.map((x) => x.choices)), messages: joined(p.map((x) => x.messages)) };
    });
  }

  /** Δ-OTs for `choices` (0/1 per OT): returns `M_j = K_j ⊕ b_j·Δ` (`16·n` bytes). */
  async receiveCot(choices: Uint8Array): Promise<Uint8Array> {
    checkChoices(choices);
    return this.#lanes.run(choices.length, 'receiveCot', (lo, hi) => choices.subarray(lo, hi), joinBytes);
  }

  /** Chosen-message OT: returns `m_{b_j}` per OT. */
  async receiveChosen(choices: Uint8Array): Promise<Uint8Array> {
    checkChoices(choices);
    return this.#lanes.run(choices.length, 'receiveChosen', (lo, hi) => choices.subarray(lo, hi), joinBytes);
  }

  /** Correlated OT: returns `m0_j ⊕ b_j·x_j` per OT. */
  async receiveCorrelated(choices: Uint8Array): Promise<Uint8Array> {
    checkChoices(choices);
    return this.#lanes.run(choices.length, 'receiveCorrelated', (lo, hi) => choices.subarray(lo, hi), joinBytes);
  }

  /** @internal Tests: the session id of each KOS instance (the caller's at k = 1, derived ones above). */
  get _instanceSessionIds(): Uint8Array[] {
    return this.#lanes.sessionIds.map((x) => x.slice());
  }

  /** As {@link OtSender.close}. */
  close(): Promise<void> {
    return this.#lanes.close();
  }

  /** Releases the instance without waiting (see {@link OtSender.close}). */
  free(): void {
    void this.#lanes.close().catch(() => {});
  }
}

/**
 * Sets up the sender side of an OT extension with `peer` (runs 128 base OTs per instance). Δ is
 * random unless `delta` is given; see {@link OtSenderOptions} for what a caller-chosen Δ may be
 * used for.
 */
export async function otSender(options: OtSenderOptions): Promise<OtSender> {
  checkSetup(options);
  const delta = options.delta ?? new Uint8Array(0);
  if (!(delta instanceof Uint8Array) || (delta.length !== 0 && delta.length !== 16)) {
    throw new WebmpcError('INVALID_ARGUMENT', 'delta must be 16 bytes');
  }
  if (delta.length === 16 && delta.every((b) => b === 0)) throw new WebmpcError('INVALID_ARGUMENT', 'delta must not be zero');
  const allowHashed = options.allowHashedWithChosenDelta === true;
  // A copy: the instances wipe theirs when they end, not the caller's.
  const { lanes, delta: d } = await setupLanes(options, 'sender', delta.slice(), allowHashed);
  return new OtSender(CONSTRUCT, lanes, d);
}

/** Sets up the receiver side of an OT extension with `peer` (runs 128 base OTs per instance). */
export async function otReceiver(options: OtOptions): Promise<OtReceiver> {
  checkSetup(options);
  const { lanes } = await setupLanes(options, 'receiver', new Uint8Array(0), false);
  return new OtReceiver(CONSTRUCT, lanes);
}
