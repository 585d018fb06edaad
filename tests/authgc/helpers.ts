// Shared by the authgc SDK tests: groups of sessions over in-memory transports (optionally with a
// wrapper around one party's transport), expected outputs from the independent reference
// evaluator, and transports that count, tamper with or stall a party's messages.
import { createMemoryTransports, session, type Session, type Transport } from '../../dist/index.js';
type RecvOptions = Parameters<Transport['recv']>[1];
import { bigToBytes, bytesToBig, evaluate, parseBinary, parseBristol, type RefCircuit } from '../circuit/eval-reference.js';

export interface Group {
  sessions: Session[];
  /** What each session talks through (the wrapper, where one was given). */
  transports: Transport[];
  /** The in-memory transports underneath. */
  inner: Transport[];
  close(): Promise<void>;
}

/**
 * `parties` sessions over one in-memory group; `wrap(transport, party)` may replace a party's
 * transport (to tamper with or stall what it sends).
 */
export async function group(
  parties: number,
  options: { recvTimeoutMs?: number; wrap?: (t: Transport, party: number) => Transport } = {},
): Promise<Group> {
  const inner = createMemoryTransports(parties, { recvTimeoutMs: options.recvTimeoutMs ?? 60_000, sendTimeoutMs: 60_000 });
  const transports = inner.map((t, p) => options.wrap?.(t, p) ?? t);
  const sessions = await Promise.all(transports.map((transport, party) => session({ transport, party, parties })));
  return {
    sessions,
    transports,
    inner,
    close: async () => {
      await Promise.all(sessions.map((s) => s.close().catch(() => {})));
      await Promise.all(inner.map((t) => t.close().catch(() => {})));
    },
  };
}

export const hex = (b: Uint8Array | undefined) => (b ? Buffer.from(b).toString('hex') : undefined);
export const unhex = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));

/** Deterministic pseudo-random bytes (xorshift), so a failure can be reproduced. */
export function bytes(length: number, seed: number): Uint8Array {
  let x = (seed * 0x9e3779b1 + 0x7f4a7c15) >>> 0 || 1;
  return Uint8Array.from({ length }, () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x & 0xff;
  });
}

/** A circuit for the reference evaluator: Bristol text or webmpc binary. */
export function reference(source: string | Uint8Array): RefCircuit {
  return typeof source === 'string' ? parseBristol(source) : parseBinary(source);
}

/** The reference evaluator's outputs (big-endian bytes) on input values given as big-endian bytes. */
export function expected(c: RefCircuit, inputs: readonly Uint8Array[]): Uint8Array[] {
  return evaluate(c, inputs.map(bytesToBig)).map((v, i) => bigToBytes(v, Math.ceil(c.outputs[i]! / 8)));
}

/** The input values party `p` owns, in circuit order. */
export function mine(owners: readonly number[], values: readonly Uint8Array[], p: number): Uint8Array[] {
  return values.filter((_, i) => owners[i] === p);
}

/** A transport that passes everything to `inner`, counting the messages sent (per peer and in all). */
export class Counting implements Transport {
  sent = 0;
  bytes = 0;
  readonly sentTo: number[];
  constructor(readonly inner: Transport) {
    this.sentTo = new Array<number>(inner.parties).fill(0);
  }
  get party() {
    return this.inner.party;
  }
  get parties() {
    return this.inner.parties;
  }
  get closed() {
    return this.inner.closed;
  }
  send(to: number, data: Uint8Array): Promise<void> {
    const out = this.edit(to, this.sentTo[to]!, data);
    this.sent++;
    this.sentTo[to]!++;
    this.bytes += data.length;
    return out === 'stall' ? this.stalled() : this.inner.send(to, out);
  }
  recv(from: number, options?: RecvOptions): Promise<Uint8Array> {
    return this.inner.recv(from, options);
  }
  close(reason?: Error): Promise<void> {
    return this.inner.close(reason);
  }
  /** What to send instead of message `index` to `to` (override to tamper), or `'stall'`. */
  protected edit(_to: number, _index: number, data: Uint8Array): Uint8Array | 'stall' {
    return data;
  }
  /** Overridden by a stalling transport. */
  protected stalled(): Promise<void> {
    throw new Error('not a stalling transport');
  }
}

/**
 * A party that goes silent, as a process that hangs or loses its network would: from its
 * `dieAt`-th message on (counting every peer), nothing it sends leaves and nothing more arrives
 * for it; its transport is not closed, so the peers learn of it only by their timeouts.
 * `release()` ends the stall (its run then fails) so the test leaves nothing pending.
 */
export class Stalling extends Counting {
  diedAt: number | undefined;
  #dead = false;
  #release: (() => void) | undefined;
  readonly #gone = new Promise<void>((resolve) => (this.#release = resolve));
  constructor(inner: Transport, readonly dieAt: number) {
    super(inner);
  }
  protected override edit(_to: number, _index: number, data: Uint8Array): Uint8Array | 'stall' {
    if (!this.#dead && this.sent >= this.dieAt) {
      this.#dead = true;
      this.diedAt = Date.now();
    }
    return this.#dead ? 'stall' : data;
  }
  protected override stalled(): Promise<void> {
    return this.#gone.then(() => {
      throw new Error('stalled party released');
    });
  }
  override recv(from: number, options?: RecvOptions): Promise<Uint8Array> {
    if (this.#dead) return this.stalled() as Promise<never>;
    return super.recv(from, options);
  }
  release(): void {
    this.#release?.();
  }
}
