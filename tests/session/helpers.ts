// Shared by the session tests: a connected pair (or group) of sessions over in-memory transports.
import { createMemoryTransports, session, type Session, type Transport } from '../../dist/index.js';

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
