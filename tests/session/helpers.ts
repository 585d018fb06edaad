// Shared by the session tests: a connected pair (or group) of sessions over in-memory transports.
import { afterEach } from 'vitest';
import { createMemoryTransports, session, type Session, type Transport } from '../../dist/index.js';
import { EngineWorker } from '../../dist/engine/worker-host.js';

export interface Group {
  sessions: Session[];
  transports: Transport[];
  close(): Promise<void>;
}

/** `parties` sessions over one in-memory group; `recvTimeoutMs` long enough to never fire here. */
/**
 * `parties` sessions over in-memory transports. `worker: false` runs their cryptography on this
 * thread (for tests that look into this realm's Wasm memory); the default is the engine worker.
 */
export async function group(parties: number, recvTimeoutMs = 30_000, options: { worker?: boolean } = {}): Promise<Group> {
  const transports = createMemoryTransports(parties, { recvTimeoutMs });
  const sessions = await Promise.all(transports.map((transport, party) => session({ transport, party, parties, ...options })));
  return { sessions, transports, close: async () => void (await Promise.all(transports.map((t) => t.close()))) };
}

/** `parties` sessions in their engine workers, offering `threads`; `close` ends them (and their workers). */
export async function withThreads(parties: number, threads: number, recvTimeoutMs = 20_000): Promise<{ s: Session[]; close(): Promise<void> }> {
  const ts = createMemoryTransports(parties, { recvTimeoutMs });
  const s = await Promise.all(ts.map((transport, party) => session({ transport, party, parties, threads })));
  return { s, close: async () => void (await Promise.all(s.map((x) => x.close().catch(() => {})))) };
}

export async function pair(recvTimeoutMs?: number): Promise<[Session, Session, () => Promise<void>, Transport[]]> {
  const g = await group(2, recvTimeoutMs);
  return [g.sessions[0]!, g.sessions[1]!, g.close, g.transports];
}

export const hex = (b: Uint8Array | undefined) => (b ? Buffer.from(b).toString('hex') : undefined);
export const unhex = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));

/** `n` as `bytes` big-endian bytes. */
export function be(n: number | bigint, bytes: number): Uint8Array {
  const out = new Uint8Array(bytes);
  let v = BigInt(n);
  for (let i = bytes - 1; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

/** The rejection of `p`, with the time it arrived (ms since the epoch); fails if `p` resolves. */
export async function rejection(p: Promise<unknown>): Promise<{ error: any; at: number }> {
  try {
    await p;
  } catch (error) {
    return { error, at: Date.now() };
  }
  throw new Error('expected a rejection');
}

/**
 * Plays a party whose parallel instances work under another global key than its primary's. Each
 * instance task passes through this thread between the primary's engine worker and the
 * instance's (`EngineWorker.perform`, wrapped here): party `cheater`'s `protocol` instance tasks
 * get their key (`delta`) with one bit flipped (not the lowest: authgc's Δ has it set), and
 * `edit`, if given, may change what the instance hands back, knowing the primary's key.
 * `changed` counts the tasks changed; `restore()` unwraps.
 */
/** The instance-key change in force, if any: at most one at a time. */
let activeKeyChange: { restore(): void } | undefined;

/** Undoes any {@link changeInstanceKey} after each test of the calling file, pass or fail. */
export function restoreInstanceKeysAfterEach(): void {
  afterEach(() => activeKeyChange?.restore());
}

export function changeInstanceKey(
  protocol: string,
  cheater: number,
  edit?: (made: unknown, primaryKey: Uint8Array) => void,
): { readonly changed: number; restore(): void } {
  const honest = EngineWorker.prototype.perform;
  let changed = 0;
  EngineWorker.prototype.perform = async function (this: EngineWorker, op, hooks, modules) {
    const o = op as { op: string; protocol: string; ctx: { party: number }; args: { delta: Uint8Array } | null };
    if (o.op !== 'instance' || o.protocol !== protocol || o.ctx.party !== cheater || o.args === null) {
      return honest.call(this, op, hooks, modules);
    }
    const primaryKey = o.args.delta.slice();
    const other = o.args.delta.slice();
    other[7]! ^= 0x40;
    changed++;
    const made = await honest.call(this, { ...o, args: { ...o.args, delta: other } } as typeof op, hooks, modules);
    edit?.(made, primaryKey);
    return made;
  };
  activeKeyChange?.restore();
  const change = {
    get changed() {
      return changed;
    },
    restore: () => {
      EngineWorker.prototype.perform = honest;
      if (activeKeyChange === change) activeKeyChange = undefined;
    },
  };
  activeKeyChange = change;
  return change;
}
