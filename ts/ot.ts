/**
 * Oblivious transfer between two parties over any {@link Transport}: KOS malicious OT extension
 * (Masny–Rindal base OTs on ristretto255, the revised KOS consistency check, TCCR hashing with
 * per-OT tweaks). All cryptography runs in Rust/Wasm (`wasm/crates/ot`); this module checks
 * arguments, reshapes bytes and maps errors.
 *
 * ```ts
 * const [a, b] = createMemoryTransports(2);
 * const sid = crypto.getRandomValues(new Uint8Array(32));           // both parties agree on it
 * const [s, r] = await Promise.all([otSender({ transport: a, peer: 1, sessionId: sid }),
 *                                   otReceiver({ transport: b, peer: 0, sessionId: sid })]);
 * const [pairs, got] = await Promise.all([s.sendRandom(1000), r.receiveRandom(1000)]);
 * ```
 *
 * Security: KOS is secure against a malicious sender or receiver, with abort. Its one known,
 * tolerable leakage is that a cheating receiver can guess bits of the sender's Δ, each guess
 * being caught with probability ½; so **a Δ must never be used again after an abort**. The
 * simplest way to keep that rule is to let each sender draw its own random Δ (omit `delta`).
 * A caller-chosen `delta` (e.g. one global Δ shared by a party's instances towards several peers)
 * must be nonzero and serves Δ-OT only (`sendCot`/`receiveCot`); random, correlated and
 * chosen-message OT on it are refused with `INVALID_ARGUMENT` unless the caller opts in with
 * `allowHashedWithChosenDelta`, vouching that the Δ is random, secret and discarded after any
 * abort of any instance that held it.
 *
 * Failure: a peer that cheats (fails the consistency check) or sends malformed messages makes the
 * call reject with {@link ProtocolAbort}; the OT instance is then unusable and this module closes
 * the transport, so the peer aborts too instead of waiting out its timeout. Network failures
 * reject with the transport's own {@link TransportError}.
 */
import { ProtocolAbort, WebmpcError, fromWasmError } from './errors.js';
import { wasm } from './engine/wasm.js';
import type { Transport } from './net/transport.js';

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
}

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

/** Splits `m0 ‖ m1` per OT into two arrays. */
function split(pairs: Uint8Array): { m0: Uint8Array; m1: Uint8Array } {
  const n = pairs.length / (2 * OT_MESSAGE_BYTES);
  const m0 = new Uint8Array(n * OT_MESSAGE_BYTES);
  const m1 = new Uint8Array(n * OT_MESSAGE_BYTES);
  for (let j = 0; j < n; j++) {
    m0.set(pairs.subarray(32 * j, 32 * j + 16), 16 * j);
    m1.set(pairs.subarray(32 * j + 16, 32 * j + 32), 16 * j);
  }
  return { m0, m1 };
}

/** Guards the constructors: instances come from {@link otSender} / {@link otReceiver} only. */
const CONSTRUCT: unique symbol = Symbol('webmpc.ot');

/** The sending side of an OT extension instance with one peer. */
export class OtSender {
  // ES-private, so the Wasm handle's generated types stay out of the published declarations.
  readonly #raw: RawSender;
  readonly #transport: Transport;

  /** @internal */
  constructor(token: typeof CONSTRUCT, raw: unknown, transport: Transport) {
    if (token !== CONSTRUCT) throw new TypeError('use otSender() to create an OtSender');
    this.#raw = raw as RawSender;
    this.#transport = transport;
  }

  /** Δ (16 bytes, this sender's secret): in Δ-OT the receiver gets `K_j ⊕ b_j·Δ`. */
  get delta(): Uint8Array {
    return this.#raw.delta();
  }

  /** `n` random OTs: `m0`, `m1` are `16·n` bytes each (OT j at bytes `16j..16j+16`). */
  async sendRandom(n: number): Promise<{ m0: Uint8Array; m1: Uint8Array }> {
    checkCount(n);
    return split(await run(this.#transport, () => this.#raw.sendRandom(n) as Promise<Uint8Array>));
  }

  /** `n` Δ-OTs: returns the keys `K_j` (`16·n` bytes). */
  async sendCot(n: number): Promise<Uint8Array> {
    checkCount(n);
    return run(this.#transport, () => this.#raw.sendCot(n) as Promise<Uint8Array>);
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
    await run(this.#transport, () => this.#raw.sendChosen(flat) as Promise<void>);
  }

  /** Correlated OT: returns random `m0` (`16·n` bytes); the receiver gets `m0_j ⊕ b_j·x_j`. */
  async sendCorrelated(correlations: Uint8Array): Promise<Uint8Array> {
    checkBlocks('correlations', correlations, 1);
    return run(this.#transport, () => this.#raw.sendCorrelated(correlations) as Promise<Uint8Array>);
  }

  /** Releases the Wasm-side instance. */
  free(): void {
    this.#raw.free();
  }
}

/** The receiving side of an OT extension instance with one peer. */
export class OtReceiver {
  readonly #raw: RawReceiver;
  readonly #transport: Transport;

  /** @internal */
  constructor(token: typeof CONSTRUCT, raw: unknown, transport: Transport) {
    if (token !== CONSTRUCT) throw new TypeError('use otReceiver() to create an OtReceiver');
    this.#raw = raw as RawReceiver;
    this.#transport = transport;
  }

  /** `n` random OTs: random `choices` (one byte 0/1 per OT) and `m_{b_j}` (`16·n` bytes). */
  async receiveRandom(n: number): Promise<{ choices: Uint8Array; messages: Uint8Array }> {
    checkCount(n);
    return run(this.#transport, () => this.#raw.receiveRandom(n) as Promise<{ choices: Uint8Array; messages: Uint8Array }>);
  }

  /** Δ-OTs for `choices` (0/1 per OT): returns `M_j = K_j ⊕ b_j·Δ` (`16·n` bytes). */
  async receiveCot(choices: Uint8Array): Promise<Uint8Array> {
    checkChoices(choices);
    return run(this.#transport, () => this.#raw.receiveCot(choices) as Promise<Uint8Array>);
  }

  /** Chosen-message OT: returns `m_{b_j}` per OT. */
  async receiveChosen(choices: Uint8Array): Promise<Uint8Array> {
    checkChoices(choices);
    return run(this.#transport, () => this.#raw.receiveChosen(choices) as Promise<Uint8Array>);
  }

  /** Correlated OT: returns `m0_j ⊕ b_j·x_j` per OT. */
  async receiveCorrelated(choices: Uint8Array): Promise<Uint8Array> {
    checkChoices(choices);
    return run(this.#transport, () => this.#raw.receiveCorrelated(choices) as Promise<Uint8Array>);
  }

  /** Releases the Wasm-side instance. */
  free(): void {
    this.#raw.free();
  }
}

/**
 * Sets up the sender side of an OT extension with `peer` (runs 128 base OTs). Δ is random unless
 * `delta` is given; see {@link OtSenderOptions} for what a caller-chosen Δ may be used for.
 */
export async function otSender(options: OtSenderOptions): Promise<OtSender> {
  checkSetup(options);
  const delta = options.delta ?? new Uint8Array(0);
  if (!(delta instanceof Uint8Array) || (delta.length !== 0 && delta.length !== 16)) {
    throw new WebmpcError('INVALID_ARGUMENT', 'delta must be 16 bytes');
  }
  const allowHashed = options.allowHashedWithChosenDelta === true;
  const w = wasm();
  const raw = await run(
    options.transport,
    () => w.otSenderSetup(options.transport, options.peer, options.sessionId, delta, allowHashed) as Promise<RawSender>,
  );
  return new OtSender(CONSTRUCT, raw, options.transport);
}

/** Sets up the receiver side of an OT extension with `peer` (runs 128 base OTs). */
export async function otReceiver(options: OtOptions): Promise<OtReceiver> {
  checkSetup(options);
  const w = wasm();
  const raw = await run(
    options.transport,
    () => w.otReceiverSetup(options.transport, options.peer, options.sessionId) as Promise<RawReceiver>,
  );
  return new OtReceiver(CONSTRUCT, raw, options.transport);
}
