/**
 * Parameter agreement: before a run or a preprocessing, every party sends every other party a
 * small record of the public parameters it is about to use (operation, protocol and version,
 * party count, roles, content hash, input owners, output recipients) and compares the records it
 * receives with its own. Any difference is a `PARAMETER_MISMATCH` naming the field, before any
 * protocol message, so a party running `yao2pc` against one running `plain` (or another circuit,
 * garbler or assignment) gets a clear verdict instead of a malformed message or a hang.
 *
 * Every party receives all the other records before it judges, so (a) if the records are not all
 * equal, every party sees a difference and rejects, and (b) nothing is left unread on the
 * transport: after a mismatch the session is still in step and can run again.
 *
 * The record never holds input values. Long fields (owners of a circuit with many inputs) are
 * sent as their SHA-256, so the record stays small whatever the circuit.
 */
import { ProtocolAbort } from '../errors.js';
import type { Transport } from '../net/transport.js';
import type { Json } from './types.js';
import { sha256, utf8 } from './util.js';

/** The public parameters of one operation, field by field, in a fixed order. */
export type ParameterRecord = ReadonlyArray<readonly [field: string, value: Json]>;

const MAGIC = 'webmpc/parameters/v1';
/** Fields whose JSON is longer than this travel as their hash. */
const INLINE_LIMIT = 4096;
/** Larger records are refused unread: ours stay far below (long fields are hashed). */
const MAX_RECORD_BYTES = 256 * 1024;
/** Fields whose values may be quoted in a mismatch message (public names and small numbers). */
const QUOTED = new Set(['operation', 'protocol', 'version', 'kind', 'parties', 'roles', 'params']);

/** Marks a verdict every party reaches on its own (so the transport can stay open). */
const SHARED_VERDICTS = new WeakSet<Error>();

/** True for an error {@link agree} raised because the records differ: every party sees it. */
export function isSharedVerdict(error: unknown): boolean {
  return error instanceof Error && SHARED_VERDICTS.has(error);
}

/** JSON with object keys sorted, so equal values always give equal text. */
function canonical(value: Json): string {
  if (Array.isArray(value)) return `[${value.map((v: Json) => canonical(v)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const obj = value as { readonly [key: string]: Json };
    return `{${Object.keys(obj)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(obj[k]!)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

async function encodeField(value: Json): Promise<string> {
  const text = canonical(value);
  if (text.length <= INLINE_LIMIT) return text;
  const digest = await sha256(utf8(text));
  return canonical({ sha256: [...digest].map((b) => b.toString(16).padStart(2, '0')).join('') });
}

/** Quotes a peer-supplied value for a message: short, and with no control characters. */
function quote(text: string): string {
  const clean = text.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 60 ? `${clean.slice(0, 57)}...` : clean;
}

/** Where two encoded arrays (owners, outputs) first differ, when both were sent inline. */
function firstDifference(mine: string, theirs: string): number | undefined {
  try {
    const a = JSON.parse(mine) as unknown;
    const b = JSON.parse(theirs) as unknown;
    if (!Array.isArray(a) || !Array.isArray(b)) return undefined;
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      if (JSON.stringify(a[i]) !== JSON.stringify(b[i])) return i;
    }
  } catch {
    // Not both inline arrays: the field name alone says enough.
  }
  return undefined;
}

function describe(field: string, mine: string | undefined, theirs: string | undefined, peer: number): string {
  const base = `party ${peer} disagrees on the ${field}`;
  if (mine === undefined || theirs === undefined) return `${base} (one side does not send it: different webmpc versions?)`;
  if (QUOTED.has(field)) return `${base}: ${quote(mine)} here, ${quote(theirs)} at party ${peer}`;
  if (field === 'owners' || field === 'outputs') {
    const i = firstDifference(mine, theirs);
    if (i !== undefined) return `${base} (${field === 'owners' ? 'owner of input value' : 'recipients of output value'} ${i})`;
  }
  return base;
}

/**
 * Resources each party offers and the parties settle on the smallest of (e.g. the number of
 * parallel instances: `threads`). Whole numbers ≥ 1; a party that offers nothing for a name
 * counts as offering 1.
 */
export type Offers = { readonly [name: string]: number };

/**
 * Exchanges `record` with every other party and compares. Rejects with `PARAMETER_MISMATCH`
 * (naming the first differing field and the peer) if any party's record differs, with
 * `MALFORMED_MESSAGE` if a peer sent something that is not a record, and with the transport's
 * error if the exchange itself fails. Resolves with the `offers` every party can meet: for each
 * name, the smallest any party offered. `peers` (default: every other party) limits the exchange
 * to the parties of a pairwise operation (OT extension with one peer).
 */
export async function agree(
  transport: Transport,
  party: number,
  parties: number,
  record: ParameterRecord,
  offers: Offers = {},
  peers: readonly number[] = [...Array(parties).keys()].filter((p) => p !== party),
): Promise<Offers> {
  const fields: [string, string][] = [];
  for (const [name, value] of record) fields.push([name, await encodeField(value)]);
  const message = utf8(JSON.stringify({ magic: MAGIC, fields, offers }));
  const received: (Uint8Array | Error)[] = [];
  await Promise.all([
    ...peers.map((p) => transport.send(p, message)),
    // Every record is read before judging, so no stale record is left for the next run.
    (async () => {
      for (const p of peers) received.push(await transport.recv(p));
    })(),
  ]);
  let mismatch: ProtocolAbort | undefined;
  const settled: { [name: string]: number } = { ...offers };
  peers.forEach((p, k) => {
    const { fields: theirs, offers: theirOffers } = parseRecord(received[k] as Uint8Array, p);
    for (const name of Object.keys(settled)) settled[name] = Math.min(settled[name]!, theirOffers.get(name) ?? 1);
    if (mismatch) return;
    const names = [...new Set([...fields.map(([n]) => n), ...theirs.keys()])];
    const mine = new Map(fields);
    const differing = names.find((n) => mine.get(n) !== theirs.get(n));
    if (differing !== undefined) {
      mismatch = new ProtocolAbort('PARAMETER_MISMATCH', describe(differing, mine.get(differing), theirs.get(differing), p), {
        peer: p,
      });
    }
  });
  if (mismatch) {
    SHARED_VERDICTS.add(mismatch);
    throw mismatch;
  }
  return settled;
}

/** Largest offer taken from a peer (more is never needed, and keeps a peer's number sane). */
const MAX_OFFER = 1024;

function parseRecord(bytes: Uint8Array, peer: number): { fields: Map<string, string>; offers: Map<string, number> } {
  const bad = () =>
    new ProtocolAbort('MALFORMED_MESSAGE', `party ${peer} sent something other than its parameter record (another webmpc version?)`, {
      peer,
    });
  if (bytes.length > MAX_RECORD_BYTES) throw bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw bad();
  }
  const { magic, fields, offers } = (parsed ?? {}) as { magic?: unknown; fields?: unknown; offers?: unknown };
  if (magic !== MAGIC || !Array.isArray(fields)) throw bad();
  const out = new Map<string, string>();
  for (const f of fields as unknown[]) {
    if (!Array.isArray(f) || f.length !== 2 || typeof f[0] !== 'string' || typeof f[1] !== 'string' || out.has(f[0])) throw bad();
    out.set(f[0], f[1]);
  }
  const offered = new Map<string, number>();
  if (offers !== undefined) {
    if (typeof offers !== 'object' || offers === null || Array.isArray(offers)) throw bad();
    for (const [name, v] of Object.entries(offers)) {
      if (!Number.isSafeInteger(v) || (v as number) < 1) throw bad();
      offered.set(name, Math.min(v as number, MAX_OFFER));
    }
  }
  return { fields: out, offers: offered };
}

