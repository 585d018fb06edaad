/**
 * Sessions: the SDK's entry point for running a computation among the parties of a Transport.
 *
 * ```ts
 * const s = await webmpc.session({ transport, party, parties: 2 });
 * const out = await s.run(circuit, { inputs: [myValue], protocol: 'yao2pc' });
 * // out[i]: output value i as big-endian bytes, or undefined if it is not revealed to us
 * ```
 *
 * Conventions (those of Bristol Fashion and `../shared/circuits/README.md`): input value `i` of
 * the circuit belongs to party `owners[i]` (default: input 1 to party 0, input 2 to party 1, …);
 * each value is passed as big-endian bytes, `ceil(width / 8)` of them. Output value `i` is
 * revealed to the parties in `outputs[i]` (default: everyone) and to nobody else.
 *
 * Protocols:
 * - `yao2pc`: semi-honest garbled circuits (half-gates) between two parties; party `garbler`
 *   (default 0) garbles, the other evaluates, OT extension transfers the evaluator's input labels.
 *   Set up once per session (128 base OTs), then every run reuses it.
 * - `plain`: no privacy at all — every party sends its inputs in the clear and evaluates the
 *   circuit itself. For debugging and as a reference; never for real secrets.
 *
 * Both parties must call `run` with the same circuit and assignment; a mismatch is detected
 * (content hash) before any input-dependent message and rejects with `PARAMETER_MISMATCH`.
 * Cancelling through `signal` closes the session's transport (a two-party protocol cannot
 * continue without one party), so the peer's run rejects too.
 */
import { ProtocolAbort, TransportError, WebmpcError, fromWasmError } from './errors.js';
import { wasm } from './engine/wasm.js';
import {
  PreparedCircuit,
  isStreamedCircuit,
  preparedHandle,
  prepareCircuit,
  streamedShape,
  type CircuitSource,
  type StreamedCircuit,
} from './circuit/source.js';
import type { Transport } from './net/transport.js';

export type Protocol = 'yao2pc' | 'plain';

export interface SessionOptions {
  transport: Transport;
  /** This party's index; must equal `transport.party`. */
  party: number;
  /** Number of parties; must equal `transport.parties`. */
  parties: number;
  /**
   * 32 bytes both parties agree on. If omitted, the parties agree on a fresh one by exchanging
   * random contributions over the transport.
   */
  sessionId?: Uint8Array;
}

export interface Progress {
  gatesDone: number;
  gatesTotal: number;
  /** Bytes this party has sent in this run so far. */
  bytesSent: number;
}

export interface RunOptions {
  /** This party's own input values, in circuit order, as big-endian bytes. */
  inputs: readonly Uint8Array[];
  /** The party supplying each input value (default: input i ↦ party i). */
  owners?: readonly number[];
  /** The parties learning each output value (default: all parties). */
  outputs?: readonly (readonly number[])[];
  protocol?: Protocol;
  /** For `yao2pc`: the garbling party (default 0). */
  garbler?: number;
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
}

type RawYao = import('./wasm-gen/webmpc.js').YaoSession;

async function sha256(...parts: Uint8Array[]): Promise<Uint8Array> {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const buf = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    buf.set(p, at);
    at += p.length;
  }
  return new Uint8Array(await crypto.subtle.digest('SHA-256', buf));
}

/** A computation session among the parties of one transport. */
export class Session {
  #yao: { garbler: number; raw: RawYao } | undefined;
  /** What the protocols talk through: the transport, counting the bytes this party sends. */
  readonly #counted: Transport;
  #bytesSent = 0;
  #runs = 0;
  #busy = false;
  /** The last circuit source run and its prepared form: repeated runs skip decoding and hashing. */
  #lastCircuit: { source: CircuitSource | PreparedCircuit; prepared: PreparedCircuit } | undefined;

  /** @internal */
  constructor(
    readonly transport: Transport,
    readonly party: number,
    readonly parties: number,
    readonly sessionId: Uint8Array,
  ) {
    const t = transport;
    this.#counted = {
      party: t.party,
      parties: t.parties,
      closed: t.closed,
      send: (to, data) => {
        this.#bytesSent += data.length;
        return t.send(to, data);
      },
      recv: (from, options) => t.recv(from, options),
      close: (reason) => t.close(reason),
    };
  }

  /** Bytes this party has sent through the session so far (all runs). */
  get bytesSent(): number {
    return this.#bytesSent;
  }

  /** Runs `circuit`; resolves to one entry per output value (undefined where not revealed). */
  async run(circuit: CircuitSource | PreparedCircuit | StreamedCircuit, options: RunOptions): Promise<(Uint8Array | undefined)[]> {
    if (this.#busy) throw new WebmpcError('BUSY', 'this session is already running a computation');
    this.#busy = true;
    const { signal } = options;
    const onAbort = () => {
      void this.transport.close(new TransportError('ABORTED', 'the computation was cancelled'));
    };
    try {
      signal?.throwIfAborted();
      signal?.addEventListener('abort', onAbort, { once: true });
      const parsed = isStreamedCircuit(circuit) ? circuit : this.#prepare(circuit);
      const shape = isStreamedCircuit(parsed) ? streamedShape(parsed) : parsed;
      const owners = options.owners ?? shape.inputWidths.map((_, i) => i);
      const outputs = options.outputs ?? shape.outputWidths.map(() => [...Array(this.parties).keys()]);
      this.#checkAssignment(shape.inputWidths.length, shape.outputWidths.length, owners, outputs);
      this.#checkInputs(shape.inputWidths, owners, options.inputs);
      const protocol = options.protocol ?? 'yao2pc';
      if (protocol === 'plain') {
        if (isStreamedCircuit(parsed)) throw new WebmpcError('INVALID_ARGUMENT', 'the plain protocol needs the whole circuit, not a stream');
        return await this.#runPlain(parsed, owners, outputs, options);
      }
      if (protocol !== 'yao2pc') throw new WebmpcError('INVALID_ARGUMENT', `unknown protocol ${String(protocol)}`);
      return await this.#runYao(parsed, owners, outputs, options);
    } catch (err) {
      if (signal?.aborted) throw new TransportError('ABORTED', 'the computation was cancelled', { cause: err });
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.#busy = false;
    }
  }

  #prepare(source: CircuitSource | PreparedCircuit): PreparedCircuit {
    if (this.#lastCircuit?.source === source) return this.#lastCircuit.prepared;
    const prepared = prepareCircuit(source);
    if (this.#lastCircuit && this.#lastCircuit.prepared !== this.#lastCircuit.source) this.#lastCircuit.prepared.free();
    this.#lastCircuit = { source, prepared };
    return prepared;
  }

  /** This party's input values against the circuit, before anything goes on the network. */
  #checkInputs(widths: readonly number[], owners: readonly number[], inputs: readonly Uint8Array[]): void {
    const mine = widths.filter((_, i) => owners[i] === this.party);
    if (!Array.isArray(inputs) || inputs.length !== mine.length) {
      throw new WebmpcError('INVALID_ARGUMENT', `this party owns ${mine.length} input values; ${inputs?.length ?? 0} given`);
    }
    mine.forEach((w, k) => {
      const v = inputs[k];
      if (!(v instanceof Uint8Array) || v.length !== Math.ceil(w / 8)) {
        throw new WebmpcError('INVALID_ARGUMENT', `input value ${k + 1} must be ${Math.ceil(w / 8)} bytes (a ${w}-bit value)`);
      }
    });
  }

  #checkAssignment(nIn: number, nOut: number, owners: readonly number[], outputs: readonly (readonly number[])[]): void {
    const isParty = (p: number) => Number.isInteger(p) && p >= 0 && p < this.parties;
    if (owners.length !== nIn || !owners.every(isParty)) {
      throw new WebmpcError('INVALID_ARGUMENT', `owners must name a party for each of the ${nIn} input values`);
    }
    if (outputs.length !== nOut || !outputs.every((o) => o.every(isParty))) {
      throw new WebmpcError('INVALID_ARGUMENT', `outputs must list parties for each of the ${nOut} output values`);
    }
  }

  async #runYao(
    circuit: PreparedCircuit | StreamedCircuit,
    owners: readonly number[],
    outputs: readonly (readonly number[])[],
    options: RunOptions,
  ): Promise<(Uint8Array | undefined)[]> {
    if (this.parties !== 2) throw new WebmpcError('INVALID_ARGUMENT', 'yao2pc runs between exactly two parties');
    const garbler = options.garbler ?? 0;
    if (garbler !== 0 && garbler !== 1) throw new WebmpcError('INVALID_ARGUMENT', 'garbler must be 0 or 1');
    const peer = 1 - this.party;
    const role = (p: number) => (p === garbler ? 0 : 1);
    const ownerBytes = Uint8Array.from(owners, role);
    const outputBytes = Uint8Array.from(outputs, (ps) => {
      const g = ps.includes(garbler);
      const e = ps.includes(1 - garbler);
      if (!g && !e) throw new WebmpcError('INVALID_ARGUMENT', 'every output value must be revealed to at least one party');
      return g && e ? 2 : g ? 0 : 1;
    });
    // Every argument is checked above; only now does anything go on the network.
    const yao = await this.#yaoSession(garbler, peer);
    const sentBefore = this.#bytesSent;
    const progress = options.onProgress
      ? (done: number, total: number) =>
          options.onProgress?.({ gatesDone: done, gatesTotal: total, bytesSent: this.#bytesSent - sentBefore })
      : undefined;
    const inputs = [...options.inputs];
    let run: () => Promise<(Uint8Array | undefined)[]>;
    if (circuit instanceof PreparedCircuit) {
      const handle = preparedHandle(circuit) as import('./wasm-gen/webmpc.js').PreparedCircuit;
      run = () => yao.run(handle, ownerBytes, outputBytes, inputs, progress) as Promise<(Uint8Array | undefined)[]>;
    } else {
      if (!(circuit.hash instanceof Uint8Array) || circuit.hash.length !== 32) {
        throw new WebmpcError('INVALID_ARGUMENT', 'a streamed circuit needs its 32-byte hash');
      }
      const iterable = circuit.pieces();
      const it =
        Symbol.asyncIterator in iterable
          ? (iterable as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]()
          : (iterable as Iterable<Uint8Array>)[Symbol.iterator]();
      // Pulled by Rust one piece at a time, so only the pieces in flight are in memory.
      const pull = async (): Promise<Uint8Array | null> => {
        const r = await it.next();
        return r.done ? null : r.value;
      };
      run = () => yao.runStream(circuit.prefix, circuit.hash, pull, ownerBytes, outputBytes, inputs, progress) as Promise<(Uint8Array | undefined)[]>;
    }
    const out = await this.#call(run);
    this.#runs++;
    return out;
  }

  async #yaoSession(garbler: number, peer: number): Promise<RawYao> {
    if (this.#yao) {
      if (this.#yao.garbler !== garbler) {
        throw new WebmpcError('INVALID_ARGUMENT', 'a session keeps its garbler; open a new session to swap roles');
      }
      return this.#yao.raw;
    }
    const sid = await sha256(new TextEncoder().encode('webmpc/session/yao2pc'), this.sessionId);
    const role = this.party === garbler ? 'garbler' : 'evaluator';
    const raw = await this.#call(() => wasm().yaoSetup(this.#counted, role, peer, sid) as Promise<RawYao>);
    this.#yao = { garbler, raw };
    return raw;
  }

  async #runPlain(
    parsed: PreparedCircuit,
    owners: readonly number[],
    outputs: readonly (readonly number[])[],
    options: RunOptions,
  ): Promise<(Uint8Array | undefined)[]> {
    const mine = owners.map((p, i) => (p === this.party ? i : -1)).filter((i) => i >= 0);
    if (options.inputs.length !== mine.length) {
      throw new WebmpcError('INVALID_ARGUMENT', `${options.inputs.length} input values given; this party owns ${mine.length}`);
    }
    // Everyone sends all their values to everyone, length-prefixed, in one message.
    const encoded = encodeValues(options.inputs);
    const peers = [...Array(this.parties).keys()].filter((p) => p !== this.party);
    await Promise.all(peers.map((p) => this.#counted.send(p, encoded)));
    const values: (Uint8Array | undefined)[] = new Array(owners.length);
    mine.forEach((i, k) => (values[i] = options.inputs[k]));
    for (const p of peers) {
      const theirs = decodeValues(await this.transport.recv(p), p);
      const slots = owners.map((o, i) => (o === p ? i : -1)).filter((i) => i >= 0);
      if (theirs.length !== slots.length) {
        throw new ProtocolAbort('PARAMETER_MISMATCH', `party ${p} sent ${theirs.length} input values; ${slots.length} expected`, { peer: p });
      }
      slots.forEach((i, k) => (values[i] = theirs[k]));
    }
    const out = parsed.evaluate(values as Uint8Array[]);
    this.#runs++;
    return out.map((v, i) => (outputs[i]!.includes(this.party) ? v : undefined));
  }

  async #call<T>(f: () => Promise<T>): Promise<T> {
    try {
      return await f();
    } catch (err) {
      const e = fromWasmError(err);
      // A protocol verdict ends the session for both parties: close so the peer aborts at once.
      // (A parameter mismatch is seen by both parties, each holding the other's description, so
      // the transport stays open for the peer to reach the same verdict.)
      if (e instanceof ProtocolAbort && e.code !== 'PARAMETER_MISMATCH') await this.transport.close(e);
      throw e;
    }
  }

  /** Releases Wasm-side state; the transport is the caller's to close. */
  free(): void {
    this.#yao?.raw.free();
    this.#yao = undefined;
    if (this.#lastCircuit && this.#lastCircuit.prepared !== this.#lastCircuit.source) this.#lastCircuit.prepared.free();
    this.#lastCircuit = undefined;
  }
}

function encodeValues(values: readonly Uint8Array[]): Uint8Array {
  const total = values.reduce((n, v) => n + 4 + v.length, 4);
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  view.setUint32(0, values.length, true);
  let at = 4;
  for (const v of values) {
    view.setUint32(at, v.length, true);
    out.set(v, at + 4);
    at += 4 + v.length;
  }
  return out;
}

function decodeValues(bytes: Uint8Array, peer: number): Uint8Array[] {
  const bad = () => new ProtocolAbort('MALFORMED_MESSAGE', `party ${peer} sent malformed plain inputs`, { peer });
  if (bytes.length < 4) throw bad();
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getUint32(0, true);
  const out: Uint8Array[] = [];
  let at = 4;
  for (let i = 0; i < n; i++) {
    if (at + 4 > bytes.length) throw bad();
    const len = view.getUint32(at, true);
    if (at + 4 + len > bytes.length) throw bad();
    out.push(bytes.slice(at + 4, at + 4 + len));
    at += 4 + len;
  }
  if (at !== bytes.length) throw bad();
  return out;
}

/** Opens a session; agrees on a session id with the other parties unless one is given. */
export async function session(options: SessionOptions): Promise<Session> {
  const { transport, party, parties } = options;
  if (transport.party !== party || transport.parties !== parties) {
    throw new WebmpcError('INVALID_ARGUMENT', 'party/parties must match the transport');
  }
  let sid = options.sessionId;
  if (sid !== undefined && !(sid instanceof Uint8Array && sid.length === 32)) {
    throw new WebmpcError('INVALID_ARGUMENT', 'sessionId must be 32 bytes');
  }
  if (sid === undefined) {
    // Each party contributes 32 random bytes; the id hashes all contributions in party order, so
    // it is fresh as long as one party is honest.
    const mine = crypto.getRandomValues(new Uint8Array(32));
    const peers = [...Array(parties).keys()].filter((p) => p !== party);
    await Promise.all(peers.map((p) => transport.send(p, mine)));
    const all: Uint8Array[] = new Array(parties);
    all[party] = mine;
    for (const p of peers) {
      const c = await transport.recv(p);
      if (c.length !== 32) throw new ProtocolAbort('MALFORMED_MESSAGE', `party ${p} sent a malformed session contribution`, { peer: p });
      all[p] = c;
    }
    sid = await sha256(new TextEncoder().encode('webmpc/session-id/v1'), ...all);
  }
  return new Session(transport, party, parties, sid);
}
