/**
 * Client–server MPC: a few compute parties ("servers", 2 or more) run MASCOT (a `program`) or
 * authgc (a `circuit`, `protocol: 'authgc'`) among themselves on inputs that many clients give
 * them. A client never runs preprocessing: it secret-shares its input to the servers and gets the
 * public result back.
 *
 * ```ts
 * // each compute party (Node process or page), over the servers' mesh transport:
 * const result = await serve({
 *   transport, identity: serverIdentity, sessionId: 'auction-7',
 *   clients: listener,                                   // where clients connect (see ClientListener)
 *   input: { type: 'unsigned', bits: 32 },               // what each client gives
 *   program: (n) => vickreyAuction({ parties: 3, bids: n, bidders: 'clients' }),
 *   window: { closeAfterMs: 60_000, count: 1000 },       // whichever comes first (server 0 decides)
 * });
 * // each client (page or Node script):
 * const { outputs, index } = await submit({
 *   sessionId: 'auction-7', input: 1234n,
 *   servers: [{ publicKey: key0, connect: () => dial(0) }, { publicKey: key1, connect: () => dial(1) }, …],
 * });
 * ```
 *
 * **Input protocol** (Damgård, Damgård, Nielsen, Nordholt, Toft, "Confidential Benchmarking based
 * on Multiparty Computation", FC 2016; MP-SPDZ's external clients work the same way): for each
 * value a client gives (one per bit of a k-bit integer), the servers take a sacrificed Beaver
 * triple ([[a]], [[b]], [[c]]) and each sends the client its shares of a, b and c. The client
 * checks c = a·b: a server that changed its share of a cannot fix c without knowing b, so it is
 * caught except with probability 1/p (`CHEATING_DETECTED`; the client cannot tell which server).
 * The client sends every server ε = x − a, signed with its identity key; the servers set
 * [[x]] = [[a]] + ε. The Rust side is `webmpc_spdz::clients`.
 *
 * **Input protocol with authgc** (`webmpc_authgc::online::clients`, which has the argument): the
 * servers garble the circuit for the accepted clients first; each gives a client its share bits of
 * that client's input masks λ and of 40 check masks μ; the client sends every server x̂ = x ⊕ λ
 * (with the presence bit set), a random 40-row test R it draws only after it has every server's
 * shares, and its view R·λ ⊕ μ, signed. The servers open R·λ ⊕ μ among themselves under MACs; a
 * client whose view differs is refused (`CLIENT_REFUSED`): a server that changed its shares
 * passes the test with probability 2^-40, so it can get a client refused but never change its
 * input. A dropped or refused client's presence bit is 0 (the circuit ignores its value).
 *
 * **Who is accepted.** Server 0 closes the input window (at its deadline or count) and names the
 * clients it has; the others answer with those they have too, and the clients every server has
 * are accepted. After the inputs, the servers exchange each client's ε digest and signature: a
 * client whose ε differs between servers under valid signatures sent different values and is
 * dropped (`CLIENT_REFUSED` at the client); a server that forwards a digest the client did not
 * sign is cheating (`CHEATING_DETECTED` naming it at the honest servers); a client that does not
 * answer within `inputTimeoutMs` is dropped. The run goes on with the rest.
 *
 * **What it protects against.** Clients' inputs stay private while at least one server is honest;
 * any number of servers may be malicious, and can only make the run abort (MASCOT: every opened
 * value MAC-checked; authgc: WRK17 with abort) or get a client refused (it learns so). The outputs
 * are public: each server sends them to every accepted client, and the client accepts only if
 * every server sent the same (a server sending a wrong result is `CHEATING_DETECTED` at the
 * client). A malicious client can only choose its own input. With MASCOT integer inputs are input
 * bit by bit and every bit is checked (b² = b) inside the run: a client running modified code
 * that inputs a value out of range is refused, its input counted as 0. With authgc a client value
 * is a fixed number of bits, so it cannot be out of range. An honest client's `submit` refuses an
 * out-of-range value before sending anything. Servers are authenticated to clients by
 * pinned key, clients to servers by their identity key (libsodium, `ts/secure`), and every
 * message is encrypted. Not protected: a malicious server 0 can leave clients out of the accepted
 * set (they learn it: `CLIENT_REFUSED`), and any server can make the run abort.
 */
import { hex, concatBytes } from './bytes.js';
import { callWasm } from './engine/wasm.js';
import { ProtocolAbort, WebmpcError } from './errors.js';
import { splitTransport } from './net/mux.js';
import type { Transport } from './net/transport.js';
import type { Circuit } from './circuit/builder.js';
import { PreparedCircuit } from './circuit/source.js';
import { encodeValue, wireValue, type Program } from './program/program.js';
import { clientFormat } from './protocols/authgc.js';
import type { FieldName, InputKind } from './program/format.js';
import type { Outputs } from './protocols/types.js';
import { sha256, utf8 } from './protocols/util.js';
import { generateIdentity, secureTransport, type Identity } from './secure/index.js';
import { loadSodium } from './secure/sodium.js';
import { session as openSession } from './session.js';

export { dialServer } from './net/client-sockets.js';
export { CLIENT_OWNER } from './program/format.js';

/**
 * Where a compute party meets its clients: each client connection arrives as a two-party
 * transport on which this server is party 0 and the client party 1 (plumbing only: `serve` runs
 * the authenticated handshake over it).
 */
export interface ClientListener {
  /** Starts handing each new connection to `accept`, until `close`. */
  listen(accept: (connection: Transport) => void): void;
  /** Stops taking connections (those handed over stay open). */
  close(): Promise<void>;
}

/** A compute party as a client sees it. */
export interface ServerEndpoint {
  /** The server's Ed25519 public key (32 bytes), pinned. */
  readonly publicKey: Uint8Array;
  /** Opens a two-party transport to the server (the client is party 1). */
  connect(): Transport | Promise<Transport>;
}

/**
 * What each client gives: one value of an input kind (a k-bit integer is input as its k bits and
 * checked to be one), or `{ type: 'bits', bits: k }`: an unsigned k-bit integer that the program
 * takes as k separate 1-bit inputs, least significant first (`vickreyAuction({ method:
 * 'bitwise' })`).
 */
export type ClientInputKind = InputKind | { readonly type: 'bits'; readonly bits: number };

/** Progress of `serve` and `submit`. */
export interface ClientServerProgress {
  readonly phase: 'window' | 'masks' | 'inputs' | 'computing' | 'output' | 'done';
  /** Clients connected to this server so far (serve). */
  readonly joined?: number;
  /** Clients accepted (serve, after the window closed). */
  readonly accepted?: number;
}

/** Options of {@link serve}. */
export interface ServeOptions {
  /** The compute parties' mesh (authenticate it: `secureTransport`). */
  readonly transport: Transport;
  /** This server's identity: clients pin its public key. */
  readonly identity: Identity;
  /** The run's name (URL-safe text); clients give the same. Bound into every handshake and signature. */
  readonly sessionId: string;
  /** Where clients connect. */
  readonly clients: ClientListener;
  /** What every client gives (one value; a k-bit integer is checked to be one). */
  readonly input: ClientInputKind;
  /**
   * The protocol among the servers: `'mascot'` (default) runs `program`, arithmetic secret
   * sharing; `'authgc'` runs `circuit`, authenticated garbling, which is far cheaper for
   * comparisons (a Vickrey auction of 1,000 bids: seconds instead of many minutes).
   */
  readonly protocol?: 'mascot' | 'authgc';
  /** MASCOT: the program for `n` accepted clients: its client inputs are client 0's, then client 1's, … */
  readonly program?: (clients: number) => Program | Promise<Program>;
  /**
   * authgc: the circuit for `n` accepted clients (n ≥ 2): n inputs, each `input('client', bits + 1)`
   * with `input: { type: 'unsigned', bits }`, client 0's first: bit 0 of each is 1 when that
   * client's input counts (0 for a client dropped or refused, whose other bits are then arbitrary),
   * bits 1.. its value. Every output is public. `vickreyClientsCircuit` is one.
   */
  readonly circuit?: (clients: number) => Circuit | Promise<Circuit>;
  /** MASCOT: this server's own inputs to the program, if it has any. */
  readonly inputs?: readonly (bigint | number)[];
  /** The input window: open for `closeAfterMs` (default 60 s) or until `count` clients joined server 0. */
  readonly window?: { readonly closeAfterMs?: number; readonly count?: number };
  /** Clients to preprocess for while the window is open (default: `window.count`, else none). */
  readonly expectedClients?: number;
  /** How long an accepted client has to send its masked input (default 30 s). */
  readonly inputTimeoutMs?: number;
  /** Session threads (see `SessionOptions.threads`). */
  readonly threads?: number;
  /** Where the session's cryptography runs (see `SessionOptions.worker`). */
  readonly worker?: boolean;
  readonly onProgress?: (p: ClientServerProgress) => void;
  readonly signal?: AbortSignal;
  /** @internal Tests: lets a test server deviate in what it sends or takes. */
  readonly _cheat?: ServerCheat;
}

/** @internal How a test server deviates. */
export interface ServerCheat {
  /** Alters the mask shares (a‖b‖c, 48 bytes per mask) sent to the client of slot `index`. */
  masks?(index: number, shares: Uint8Array): void;
  /** Alters the ε of the client of slot `index` before this server uses it (not what it forwards). */
  inputUsed?(index: number, eps: Uint8Array): void;
  /** Alters the ε digest this server forwards to the other servers for slot `index`. */
  digestForwarded?(index: number, digest: Uint8Array): void;
  /** Alters the outputs sent to clients. */
  result?(outputs: string[]): void;
  /** Replaces each message this server sends the other servers on their control channel. */
  control?(message: Uint8Array): Uint8Array;
}

/** What {@link serve} resolves with. */
export interface ServeResult {
  /** The public outputs, decoded as the program's output kinds say. */
  readonly outputs: bigint[];
  /**
   * The public keys (hex) of the clients whose slots the run had, in slot order (client i's input
   * is the program's, or the circuit's, i-th); those refused are in `dropped` too (MASCOT: an
   * out-of-range input, counted as 0; authgc: a failed check, presence bit 0). With authgc every
   * accepted client has a slot (a dropped client's presence bit is 0).
   */
  readonly clients: string[];
  /** Clients dropped after acceptance, with why. */
  readonly dropped: { readonly client: string; readonly reason: string }[];
  /**
   * Milliseconds per phase at this server: `window` (open to closed, preprocessing for the
   * expected clients' masks running meanwhile), `ahead` (what of that was left when the window
   * closed), `masks`, `inputs` (masks sent to the clients' signed inputs agreed; the program's
   * preprocessing runs meanwhile), `compute` (the rest of that preprocessing and the MASCOT run),
   * `output`.
   */
  readonly ms: { readonly window: number; readonly ahead: number; readonly masks: number; readonly inputs: number; readonly compute: number; readonly output: number };
}

/** Options of {@link submit}. */
export interface SubmitOptions {
  /** The compute parties, by server index. */
  readonly servers: readonly ServerEndpoint[];
  /** The run's name, as the servers give it. */
  readonly sessionId: string;
  /** This client's input. */
  readonly input: bigint | number;
  /** This client's identity (default: a fresh one). */
  readonly identity?: Identity;
  /** How long to wait for the servers at each step (default 120 s: the window may be long). */
  readonly timeoutMs?: number;
  readonly onProgress?: (p: ClientServerProgress) => void;
  readonly signal?: AbortSignal;
  /** @internal Tests: a client that sends server `j` a different input message, or signature. */
  readonly _cheat?: { input?(server: number, eps: Uint8Array): void; signature?(server: number, signature: Uint8Array): void };
}

/** What {@link submit} resolves with. */
export interface SubmitResult {
  /** The public outputs (every server sent the same). */
  readonly outputs: bigint[];
  /** This client's slot: its input is the program's client input number `index`. */
  readonly index: number;
  /** How many clients were accepted. */
  readonly clients: number;
  /**
   * How many clients' inputs the outputs are over (every server said the same). Check it if it
   * matters: any one server can leave clients out (they are told, the others are not), and
   * outputs over few inputs say more about each of them.
   */
  readonly counted: number;
}

// Messages between a client and a server: one type byte, then the payload.
const JOIN = 1; // client → server: JSON { v }
const WELCOME = 2; // server → client: JSON { field, input }
const MASKS = 3; // server → client: index u32 LE ‖ accepted u32 LE ‖ a‖b‖c shares (48 bytes per mask)
const INPUT = 4; // client → server: signature (64) ‖ ε (16 bytes per mask)
const RESULT = 5; // server → client: JSON { outputs: decimal strings, counted }
const DROPPED = 6; // server → client: JSON { reason }

const VERSION = 1;
const SESSION_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const SIGNATURE_BYTES = 64;
const SHARE_BYTES = 48;
/** Longest a server waits for another server's word (beyond the window itself). */
const SERVER_STEP_MS = 120_000;
/** How long a server waits for the clients server 0 named to reach it too. */
const JOIN_GRACE_MS = 5_000;
/** How long a client's handshake and join may take. */
const JOIN_TIMEOUT_MS = 15_000;

function invalid(message: string): WebmpcError {
  return new WebmpcError('INVALID_ARGUMENT', message);
}

function message(type: number, payload: Uint8Array): Uint8Array {
  const m = new Uint8Array(1 + payload.length);
  m[0] = type;
  m.set(payload, 1);
  return m;
}

function json(type: number, value: unknown): Uint8Array {
  return message(type, utf8(JSON.stringify(value)));
}

function malformed(what: string, peer?: number): ProtocolAbort {
  return new ProtocolAbort('MALFORMED_MESSAGE', `client–server: malformed ${what}`, peer === undefined ? {} : { peer });
}

/** `bytes` as UTF-8 JSON, or `malformed(what, peer)`. */
function jsonOf(bytes: Uint8Array, what: string, peer?: number): unknown {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw malformed(what, peer);
  }
}

function parse(m: Uint8Array, type: number, what: string): unknown {
  if (m[0] !== type) throw malformed(what);
  return jsonOf(m.subarray(1), what);
}

/** Masks a value of `kind` needs: one per bit of an integer, one for a field element. */
function masksOf(kind: InputKind): number {
  return kind.type === 'field' ? 1 : kind.bits;
}

function sameKind(a: ClientInputKind, b: ClientInputKind): boolean {
  return a.type === b.type && (a.type === 'field' || a.bits === (b as { bits: number }).bits);
}

function checkKind(kind: unknown): ClientInputKind {
  const k = kind as ClientInputKind;
  if (k?.type === 'field') return { type: 'field' };
  if ((k?.type === 'unsigned' || k?.type === 'signed' || k?.type === 'bits') && Number.isInteger(k.bits) && k.bits >= 1 && k.bits <= 64) return { type: k.type, bits: k.bits };
  throw invalid("input must be { type: 'field' }, { type: 'unsigned' | 'signed' | 'bits', bits } (1 ≤ bits ≤ 64)");
}

/** The program inputs one client's value fills, in order. */
function programKinds(kind: ClientInputKind): InputKind[] {
  return kind.type === 'bits' ? Array.from({ length: kind.bits }, () => ({ type: 'unsigned', bits: 1 }) as const) : [kind];
}

/**
 * A client's value as the program inputs `kind` makes of it: big-endian bytes per input (a
 * 'bits' value range-checked as the unsigned integer it is, then cut into its bits).
 */
function valuesOf(kind: ClientInputKind, field: FieldName, value: bigint | number): Uint8Array[] {
  if (kind.type !== 'bits') return [encodeValue(kind, field, value, 'input')];
  const whole = encodeValue({ type: 'unsigned', bits: kind.bits }, field, value, 'input');
  const v = whole.reduce((acc, byte) => (acc << 8n) | BigInt(byte), 0n);
  return Array.from({ length: kind.bits }, (_, i) => encodeValue({ type: 'unsigned', bits: 1 }, field, (v >> BigInt(i)) & 1n, 'input'));
}

/** What a client signs: its ε for this run (the servers check it when their copies differ). */
function signedMessage(sessionId: string, digest: Uint8Array): Uint8Array {
  return concatBytes([utf8(`webmpc client input v${VERSION}\0${sessionId}\0`), digest]);
}

/** The next message from server `from` on the servers' control channel, as JSON (unchecked shape). */
async function recvControl(control: Transport, from: number, timeoutMs: number): Promise<{ t?: unknown; keys?: unknown; entries?: unknown }> {
  return jsonOf(await control.recv(from, { timeoutMs }), 'control message', from) as { t?: unknown; keys?: unknown; entries?: unknown };
}

function handshakeId(sessionId: string, server: number): string {
  return `webmpc-clients/${sessionId}/server/${server}`;
}

/** Resolves after `ms`, or rejects with ABORTED on `signal`. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(done, ms);
    function done(): void {
      signal?.removeEventListener('abort', stop);
      resolve();
    }
    function stop(): void {
      clearTimeout(t);
      reject(new WebmpcError('ABORTED', 'cancelled'));
    }
    if (signal?.aborted) stop();
    else signal?.addEventListener('abort', stop, { once: true });
  });
}

/** One connected client, at a server. */
interface Joined {
  readonly key: string;
  readonly transport: Transport;
}

/** A server's part of a client–server run that depends on the protocol among the servers. */
interface ServerSide {
  /** What the welcome tells clients besides the version. */
  readonly welcome: Record<string, unknown>;
  /** Bytes of a client's input message after its signature. */
  readonly inputBytes: number;
  /** Whether a client's input message (of `inputBytes`) decodes for the run. */
  wellFormed(input: Uint8Array): boolean;
  /** Preprocessing for `expected` clients while the window is open. */
  ahead(expected: number): Promise<void>;
  /** This server's masks for each of `n` accepted clients, in slot order (secret). */
  masks(n: number): Promise<Uint8Array[]>;
  /**
   * The run over the accepted clients' messages (`undefined`: a client dropped): the public
   * outputs, the accepted slots whose inputs the run had, in slot order, and those it refused.
   */
  compute(messages: readonly (Uint8Array | undefined)[]): Promise<{ outputs: bigint[]; slots: number[]; refused: number[] }>;
  /** Why a refused client was refused (for `dropped`, and told to the client). */
  readonly refusal: { readonly dropped: string; readonly told: string };
  /** Frees what it holds (once the run is over). */
  free(): Promise<void>;
}

type Session = Awaited<ReturnType<typeof openSession>>;

/** The MASCOT side: a Beaver triple per mask, the program run with the clients' ε. */
async function mascotSide(s: Session, options: ServeOptions, kind: ClientInputKind, expected: number): Promise<ServerSide> {
  if (typeof options.program !== 'function') throw invalid('program must be a function of the number of accepted clients');
  const { signal } = options;
  const kinds = programKinds(kind);
  const perClient = kinds.reduce((n, k) => n + masksOf(k), 0);
  // Each size's program is built once (a large one takes its builder a while on this thread).
  const built = new Map<number, Promise<Program>>();
  const program = (n: number): Promise<Program> => {
    let p = built.get(n);
    if (!p) built.set(n, (p = Promise.resolve(options.program!(n))));
    return p;
  };
  // The program for the expected clients: checked now, preprocessed for while the window is open.
  const field: FieldName = (await program(Math.max(1, expected))).field;
  let first = 0;
  let programAhead: Promise<unknown> = Promise.resolve();
  const me = s.party;
  return {
    welcome: { field, input: kind },
    inputBytes: 16 * perClient,
    wellFormed: (eps) => field === 'binary' || canonicalPrime(eps),
    async ahead(expected) {
      // The masks' triples for the expected clients (the clients wait for their masks, so those
      // come first); the program's own preprocessing runs while the accepted clients answer.
      if (expected >= 1) await s.preprocess('mascot', { field, triples: expected * perClient, ...(signal ? { signal } : {}) });
    },
    async masks(n) {
      // One triple per value each client gives; client i gets masks [first + i·m, first + (i+1)·m).
      if (n === 0) return [];
      const got = (await s._preprocessWithResult('mascot', { field, clientMasks: n * perClient, ...(signal ? { signal } : {}) })) as { first: number; shares: Uint8Array };
      first = got.first;
      const each = Array.from({ length: n }, (_, i) => got.shares.slice(i * perClient * SHARE_BYTES, (i + 1) * perClient * SHARE_BYTES));
      got.shares.fill(0);
      // The program's triples and bits, for every accepted client, while they answer (the run
      // tops up whatever a smaller program after drops still lacks: nothing).
      programAhead = (async () => s.preprocess('mascot', { program: await program(n), ...(signal ? { signal } : {}) }))();
      programAhead.catch(() => {});
      return each;
    },
    async compute(messages) {
      await programAhead;
      const keep = messages.flatMap((m, i) => (m ? [i] : []));
      if (keep.length === 0) return { outputs: [], slots: [], refused: [] };
      const p = await program(keep.length);
      const slots = p.clientInputs();
      if (slots.length !== keep.length * kinds.length || !slots.every((idx, k) => sameKind(p.inputKinds[idx]!, kinds[k % kinds.length]!))) {
        throw invalid(`program(${keep.length}) must have ${keep.length * kinds.length} client inputs, ${kinds.length} per client of the kinds input says`);
      }
      const parts: Uint8Array[] = [];
      for (const [place, i] of keep.entries()) {
        const eps = messages[i]!;
        options._cheat?.inputUsed?.(i, eps);
        // One entry per program input of this client: the id of its first mask, the client (its
        // place among the clients kept, which a refusal names), then its ε values.
        let mask = first + i * perClient;
        for (const k of kinds) {
          const head = new Uint8Array(12);
          const view = new DataView(head.buffer);
          view.setBigUint64(0, BigInt(mask), true);
          view.setUint32(8, place, true);
          const at = (mask - first - i * perClient) * 16;
          parts.push(head, eps.subarray(at, at + 16 * masksOf(k)));
          mask += masksOf(k);
        }
      }
      const bytes = concatBytes(parts);
      const drop = messages.flatMap((m, i) => (m ? [] : [[first + i * perClient, perClient] as const]));
      // A client input out of its range does not stop the run: that client is refused (its
      // inputs count as 0, see webmpc_spdz::clients) and told so.
      const { outputs: out, refused } = (await s.run(p, {
        protocol: 'mascot',
        inputs: p.encodeInputs(me, options.inputs ?? []),
        clients: { bytes, digest: hex(await sha256(bytes)), drop },
        ...(signal ? { signal } : {}),
      })) as unknown as { outputs: Outputs; refused: number[] };
      const outputs = p.decodeOutputs(out).map((v, k) => {
        if (v === undefined) throw invalid(`program output ${k} is not public: client–server runs reveal every output to every server`);
        return v;
      });
      return { outputs, slots: keep, refused: refused.map((place) => keep[place]!) };
    },
    refusal: { dropped: 'its input was out of range (counted as 0)', told: 'your input was out of range: it counted as 0' },
    async free() {},
  };
}

/**
 * The authgc side: the circuit for the accepted clients is garbled first; each client gets this
 * server's shares of its value's masks and sends x̂ with its check (`webmpc_authgc::online::clients`).
 */
async function authgcSide(s: Session, options: ServeOptions, kind: ClientInputKind, expected: number): Promise<ServerSide> {
  if (typeof options.circuit !== 'function') throw invalid('with authgc, circuit must be a function of the number of accepted clients');
  if (options.program !== undefined) throw invalid('with authgc give circuit, not program');
  if (options.inputs !== undefined) throw invalid("with authgc the circuit's inputs are the clients' only (inputs is for mascot programs)");
  if (kind.type !== 'unsigned') throw invalid("with authgc, input must be { type: 'unsigned', bits }");
  const { signal } = options;
  const width = kind.bits + 1; // the presence bit, then the value
  const format = clientFormat(width);
  type Built = { readonly andCount: number; readonly inputBits: number; readonly prepared: PreparedCircuit };
  const built = new Map<number, Promise<Built>>();
  const circuit = (n: number): Promise<Built> => {
    let c = built.get(n);
    if (!c) {
      c = Promise.resolve(options.circuit!(n)).then((got) => {
        const inputs = got?.inputs;
        if (!Array.isArray(inputs) || inputs.length !== n || !inputs.every((i) => i.party === -1 && i.width === width)) {
          throw invalid(`circuit(${n}) must have ${n} inputs, each input('client', ${width}) (the presence bit, then ${kind.bits} bits)`);
        }
        // Its wires reused: the servers hold state per wire, and a circuit over thousands of
        // clients has millions of wires but few live at once (every server compacts alike).
        const binary = callWasm((w) => w.circuitCompact(got.toBinary()) as Uint8Array);
        return { andCount: got.andCount, inputBits: n * width, prepared: new PreparedCircuit(binary, inputs.map((i) => i.party)) };
      });
      built.set(n, c);
    }
    return c;
  };
  let current: PreparedCircuit | undefined;
  const evaluator = 0;
  return {
    welcome: { protocol: 'authgc', input: kind },
    inputBytes: format.messageBytes,
    wellFormed: (m) => callWasm((w) => w.authgcClientMessageDecodes(width, m) as boolean),
    async ahead(expected) {
      // F_Pre for the expected clients' circuit and their check masks while the window is open
      // (prepare tops up whatever more clients need).
      if (expected < 2) return;
      const c = await circuit(expected);
      // At most AHEAD_AND_GATES triples: a larger circuit draws the rest as it runs, so the pools
      // (and the servers' memory) stay bounded however many clients come.
      const andGates = Math.min(c.andCount, AHEAD_AND_GATES);
      const masks = andGates + c.inputBits + format.checkBits * expected;
      await s.preprocess('authgc', { andGates, masks, ...(signal ? { signal } : {}) });
    },
    async masks(n) {
      if (n < 2) return []; // fewer than two clients: nothing to compute (the circuit needs two)
      current = (await circuit(n)).prepared;
      const shares = (await s.run(current, { protocol: 'authgc', evaluator, inputs: [], clients: { stage: 'prepare' }, ...(signal ? { signal } : {}) })) as unknown as Uint8Array;
      const per = format.shareBytes;
      const each = Array.from({ length: n }, (_, i) => shares.slice(i * per, (i + 1) * per));
      shares.fill(0);
      return each;
    },
    async compute(messages) {
      if (!current || messages.every((m) => !m)) return { outputs: [], slots: [], refused: [] };
      const bytes = concatBytes(messages.flatMap((m, i) => {
        if (!m) return [Uint8Array.of(0)];
        options._cheat?.inputUsed?.(i, m);
        return [Uint8Array.of(1), m];
      }));
      const r = (await s.run(current, {
        protocol: 'authgc',
        evaluator,
        inputs: [],
        clients: { stage: 'run', bytes, digest: hex(await sha256(bytes)) },
        ...(signal ? { signal } : {}),
      })) as unknown as { outputs: (Uint8Array | undefined)[]; refused: number[] };
      const outputs = r.outputs.map((v, k) => {
        if (v === undefined) throw invalid(`circuit output ${k} is not public: client–server runs reveal every output to every server`);
        return v.reduce((acc, byte) => (acc << 8n) | BigInt(byte), 0n);
      });
      return { outputs, slots: messages.flatMap((m, i) => (m ? [i] : [])), refused: r.refused };
    },
    refusal: {
      dropped: 'its input check failed (a server changed its masks, or the client its check)',
      told: 'your input failed its check at the servers (a server may have changed your masks): it did not count',
    },
    async free() {
      for (const c of built.values()) await c.then((x) => x.prepared.free()).catch(() => {});
      built.clear();
    },
  };
}

/** The prime of MASCOT's 'prime' field: 2^128 − 173 (the Rust `Fp`). */
const PRIME = (1n << 128n) - 173n;

/** Whether every 16-byte little-endian value of `eps` is a canonical element of F_p (< p). */
function canonicalPrime(eps: Uint8Array): boolean {
  for (let at = 0; at < eps.length; at += 16) {
    let v = 0n;
    for (let k = 15; k >= 0; k--) v = (v << 8n) | BigInt(eps[at + k]!);
    if (v >= PRIME) return false;
  }
  return true;
}

/**
 * Most AND triples an authgc server makes while the window is open: what a 1,000-client Vickrey
 * auction of 32-bit bids needs (202,000) fits; past it the run makes the rest in batches.
 */
const AHEAD_AND_GATES = 1 << 18;

/**
 * Runs a compute party of a client–server run: opens the input window, takes the accepted
 * clients' inputs, runs the program (MASCOT) or circuit (authgc) with the other servers
 * (malicious security with abort) and sends every accepted client the outputs. Every server calls
 * it with the same options (sessionId, protocol, input, program or circuit, window). See the
 * module docs for what it protects against.
 */
export async function serve(options: ServeOptions): Promise<ServeResult> {
  const { transport, identity, sessionId, clients, signal } = options ?? ({} as ServeOptions);
  if (!transport || typeof transport.send !== 'function') throw invalid('serve needs the servers\' transport');
  if (typeof sessionId !== 'string' || !SESSION_ID.test(sessionId)) throw invalid('sessionId must be 1 to 128 characters of [A-Za-z0-9_.:-]');
  if (!clients || typeof clients.listen !== 'function') throw invalid('serve needs a ClientListener (clients)');
  const protocol = options.protocol ?? 'mascot';
  if (protocol !== 'mascot' && protocol !== 'authgc') throw invalid("protocol must be 'mascot' or 'authgc'");
  if (protocol === 'mascot' && typeof options.program !== 'function') throw invalid('program must be a function of the number of accepted clients');
  if (protocol === 'authgc' && typeof options.circuit !== 'function') throw invalid('with authgc, circuit must be a function of the number of accepted clients');
  const kind = checkKind(options.input);
  const closeAfterMs = options.window?.closeAfterMs ?? 60_000;
  const count = options.window?.count;
  if (!(Number.isFinite(closeAfterMs) && closeAfterMs > 0)) throw invalid('window.closeAfterMs must be a positive number');
  if (count !== undefined && !(Number.isSafeInteger(count) && count >= 1)) throw invalid('window.count must be a positive integer');
  const inputTimeoutMs = options.inputTimeoutMs ?? 30_000;
  const progress = (p: ClientServerProgress) => options.onProgress?.(p);
  const me = transport.party;
  const servers = transport.parties;
  const cheat = options._cheat;

  const mux = splitTransport(transport, { channels: 2 });
  const [sessionChannel, control] = [mux.channels[0]!, mux.channels[1]!];
  /** Sends server `to` one message on the servers' control channel (read by `recvControl`). */
  const sendControl = (to: number, message: Record<string, unknown>): Promise<void> => {
    const bytes = utf8(JSON.stringify(message));
    return control.send(to, cheat?.control ? cheat.control(bytes) : bytes);
  };
  const s = await openSession({
    transport: sessionChannel,
    party: me,
    parties: servers,
    ...(options.threads !== undefined ? { threads: options.threads } : {}),
    ...(options.worker !== undefined ? { worker: options.worker } : {}),
  });
  const joined = new Map<string, Joined>();
  let windowOpen = true;
  const expected = options.expectedClients ?? count ?? 0;
  let side: ServerSide;
  try {
    side = await (protocol === 'authgc' ? authgcSide : mascotSide)(s, options, kind, expected);
  } catch (err) {
    await s.close().catch(() => {});
    await mux.close().catch(() => {});
    throw err;
  }
  const welcome = () => json(WELCOME, { v: VERSION, ...side.welcome });
  let countReached: (() => void) | undefined;
  const handshakes = new Set<Promise<void>>();

  const admit = async (connection: Transport): Promise<void> => {
    try {
      const t = await secureTransport(connection, {
        identity,
        sessionId: handshakeId(sessionId, me),
        trust: 'tofu',
        handshakeTimeoutMs: JOIN_TIMEOUT_MS,
        maxMessageBytes: 16 * 1024 * 1024,
      });
      const key = hex(t.peerKeys[1]!);
      const hello = parse(await t.recv(1, { timeoutMs: JOIN_TIMEOUT_MS }), JOIN, 'join') as { v?: unknown };
      if (hello?.v !== VERSION) {
        await t.send(1, json(DROPPED, { reason: `this server speaks version ${VERSION}` }));
        await t.close();
        return;
      }
      if (!windowOpen || joined.has(key)) {
        await t.send(1, json(DROPPED, { reason: windowOpen ? 'this identity has already joined' : 'the input window has closed' }));
        await t.close();
        return;
      }
      joined.set(key, { key, transport: t });
      await t.send(1, welcome());
      progress({ phase: 'window', joined: joined.size });
      if (count !== undefined && joined.size >= count) countReached?.();
    } catch {
      // A client that fails its handshake or join is simply not admitted.
      await connection.close().catch(() => {});
    }
  };

  const dropAll = async (keys: Iterable<string>, reason: string) => {
    await Promise.all(
      [...keys].map(async (k) => {
        const c = joined.get(k);
        if (!c) return;
        await c.transport.send(1, json(DROPPED, { reason })).catch(() => {});
        await c.transport.close().catch(() => {});
      }),
    );
  };

  try {
    // Preprocessing for the expected clients runs while the window is open.
    const ahead = side.ahead(expected);
    ahead.catch(() => {});

    clients.listen((c) => {
      const h = admit(c);
      handshakes.add(h);
      void h.finally(() => handshakes.delete(h));
    });

    // The window: server 0 closes it and names its clients; each server answers with those it has.
    const ms = { window: 0, ahead: 0, masks: 0, inputs: 0, compute: 0, output: 0 };
    let mark = performance.now();
    const lap = (phase: keyof typeof ms) => {
      const now = performance.now();
      ms[phase] = Math.round(now - mark);
      mark = now;
    };
    let accepted: string[];
    if (me === 0) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, closeAfterMs);
        countReached = () => {
          clearTimeout(timer);
          resolve();
        };
        signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(new WebmpcError('ABORTED', 'serve cancelled'));
        });
        if (count !== undefined && joined.size >= count) countReached();
      });
      windowOpen = false;
      const named = [...joined.keys()].sort();
      for (let j = 1; j < servers; j++) await sendControl(j, { t: 'close', keys: named });
      const have = new Set(named);
      for (let j = 1; j < servers; j++) {
        const r = await recvControl(control, j, SERVER_STEP_MS + JOIN_GRACE_MS);
        if (r?.t !== 'have' || !Array.isArray(r.keys)) throw malformed('window answer', j);
        const theirs = new Set(r.keys as string[]);
        for (const k of [...have]) if (!theirs.has(k)) have.delete(k);
      }
      accepted = named.filter((k) => have.has(k));
      for (let j = 1; j < servers; j++) await sendControl(j, { t: 'final', keys: accepted });
    } else {
      const r = await recvControl(control, 0, closeAfterMs + SERVER_STEP_MS);
      if (r?.t !== 'close' || !Array.isArray(r.keys) || !r.keys.every((k) => typeof k === 'string')) throw malformed('window close', 0);
      const named = r.keys as string[];
      // The clients server 0 has may still be on their way here.
      const deadline = performance.now() + JOIN_GRACE_MS;
      while (named.some((k) => !joined.has(k)) && performance.now() < deadline) await sleep(50, signal);
      windowOpen = false;
      await sendControl(0, { t: 'have', keys: named.filter((k) => joined.has(k)) });
      const f = await recvControl(control, 0, SERVER_STEP_MS);
      if (f?.t !== 'final' || !Array.isArray(f.keys) || !f.keys.every((k) => typeof k === 'string' && joined.has(k))) throw malformed('accepted set', 0);
      accepted = f.keys as string[];
    }
    windowOpen = false;
    await clients.close();
    await Promise.all([...handshakes]);
    const acceptedSet = new Set(accepted);
    await dropAll([...joined.keys()].filter((k) => !acceptedSet.has(k)), 'not every server had this client when the input window closed');
    progress({ phase: 'masks', joined: joined.size, accepted: accepted.length });
    lap('window');
    await ahead;
    lap('ahead');

    const n = accepted.length;
    const masks = await side.masks(n);
    const header = (i: number) => {
      const h = new Uint8Array(8);
      new DataView(h.buffer).setUint32(0, i, true);
      new DataView(h.buffer).setUint32(4, n, true);
      return h;
    };
    lap('masks');
    progress({ phase: 'inputs', joined: joined.size, accepted: n });
    const sodium = await loadSodium();
    const received = await Promise.all(
      accepted.map(async (key, i) => {
        const t = joined.get(key)!.transport;
        const mine = masks[i];
        if (!mine) return undefined; // nothing to compute: the client hears so below
        cheat?.masks?.(i, mine);
        const sent = message(MASKS, concatBytes([header(i), mine]));
        try {
          await t.send(1, sent);
          const m = await t.recv(1, { timeoutMs: inputTimeoutMs });
          if (m[0] !== INPUT || m.length !== 1 + SIGNATURE_BYTES + side.inputBytes) return undefined;
          const signature = m.slice(1, 1 + SIGNATURE_BYTES);
          const input = m.slice(1 + SIGNATURE_BYTES);
          const digest = await sha256(input);
          // Checked on receipt, so that what is kept is the client's own and usable: an input
          // without the client's signature, or one the run could not decode, counts as not sent
          // (the client is dropped; it can neither abort the run nor have a server blamed).
          if (!sodium.crypto_sign_verify_detached(signature, signedMessage(sessionId, digest), sodium.from_hex(key))) return undefined;
          if (!side.wellFormed(input)) return undefined;
          return { signature, input, digest };
        } catch {
          return undefined; // vanished or timed out: dropped below, the run goes on
        } finally {
          mine.fill(0);
          sent.fill(0);
        }
      }),
    );

    // Every server's view of every client's input: digests and signatures, to all the others.
    const entries = received.map((r, i) => {
      if (!r) return null;
      const d = r.digest.slice();
      cheat?.digestForwarded?.(i, d);
      return [hex(d), hex(r.signature)];
    });
    const views: ((string | null)[] | null)[][] = [];
    views[me] = entries;
    await Promise.all(
      Array.from({ length: servers }, async (_, j) => {
        if (j === me) return;
        await sendControl(j, { t: 'inputs', entries });
        const r = await recvControl(control, j, inputTimeoutMs + SERVER_STEP_MS);
        const entry = (e: unknown) => e === null || (Array.isArray(e) && e.length === 2 && e.every((x) => typeof x === 'string' && x.length <= 128));
        if (r?.t !== 'inputs' || !Array.isArray(r.entries) || r.entries.length !== n || !r.entries.every(entry)) throw malformed('input digests', j);
        views[j] = r.entries as ((string | null)[] | null)[];
      }),
    );
    const dropped: { client: string; reason: string }[] = [];
    const messages: (Uint8Array | undefined)[] = [];
    for (let i = 0; i < n; i++) {
      const seen = views.map((v) => v[i] ?? null);
      if (seen.some((e) => e === null)) {
        dropped.push({ client: accepted[i]!, reason: masks[i] ? 'did not send its input to every server in time' : 'too few clients to compute' });
        continue;
      }
      const digests = new Set(seen.map((e) => e![0]));
      if (digests.size === 1) {
        messages[i] = received[i]!.input;
        continue;
      }
      // Different values: whoever's signature does not verify forwarded what the client never sent.
      const publicKey = sodium.from_hex(accepted[i]!);
      for (let j = 0; j < servers; j++) {
        const [d, sig] = seen[j] as [string, string];
        const ok =
          /^[0-9a-f]{64}$/.test(d) &&
          /^[0-9a-f]{128}$/.test(sig) &&
          sodium.crypto_sign_verify_detached(sodium.from_hex(sig), signedMessage(sessionId, sodium.from_hex(d)), publicKey);
        if (!ok) throw new ProtocolAbort('CHEATING_DETECTED', `client–server: server ${j} forwarded an input its client did not sign`, { peer: j });
      }
      dropped.push({ client: accepted[i]!, reason: 'sent different servers different inputs' });
    }
    const tooFew = (d: { reason: string }) => d.reason === 'too few clients to compute';
    await dropAll(dropped.filter(tooFew).map((d) => d.client), 'too few clients joined to compute');
    await dropAll(dropped.filter((d) => !tooFew(d)).map((d) => d.client), 'dropped: ' + 'your input did not reach every server alike in time');

    // The run, over the clients kept (in slot order); with none left there is nothing to compute.
    lap('inputs');
    const kept = messages.filter((m) => m).length;
    progress({ phase: 'computing', joined: joined.size, accepted: kept });
    const { outputs, slots, refused } = await side.compute(Array.from({ length: n }, (_, i) => messages[i]));
    if (slots.length === 0) {
      progress({ phase: 'done', joined: joined.size, accepted: 0 });
      return { outputs: [], clients: [], dropped, ms };
    }
    const refusedSet = new Set(refused);
    for (const i of refused) dropped.push({ client: accepted[i]!, reason: side.refusal.dropped });
    await dropAll(refused.map((i) => accepted[i]!), side.refusal.told);
    const served = slots.filter((i) => !refusedSet.has(i));

    lap('compute');
    progress({ phase: 'output', joined: joined.size, accepted: slots.length });
    const sent = outputs.map(String);
    cheat?.result?.(sent);
    await Promise.all(
      served.map(async (i) => {
        const t = joined.get(accepted[i]!)!.transport;
        await t.send(1, json(RESULT, { outputs: sent, counted: served.length })).catch(() => {});
        await t.close().catch(() => {});
      }),
    );
    lap('output');
    progress({ phase: 'done', joined: joined.size, accepted: served.length });
    // authgc keeps every accepted slot (a dropped client's counts as absent); MASCOT the kept ones.
    return { outputs, clients: (protocol === 'authgc' ? accepted.map((_, i) => i) : slots).map((i) => accepted[i]!), dropped, ms };
  } catch (err) {
    windowOpen = false;
    // The other servers learn why first: aborting a sub-channel aborts the transport with this
    // reason. Left to the session's close below, a computation still running (the preprocessing
    // ahead) would end with only "the session was closed during a computation".
    if (err instanceof Error) await control.close(err).catch(() => {});
    await clients.close().catch(() => {});
    await Promise.all([...joined.values()].map((c) => c.transport.close(err instanceof Error ? err : undefined).catch(() => {})));
    throw err;
  } finally {
    await side.free();
    await s.close().catch(() => {});
    await mux.close().catch(() => {});
  }
}

/** A client's input ready to be masked: the bytes of each server's masks, and the masking. */
interface ClientValue {
  readonly maskBytes: number;
  /** The message to send every server, from every server's masks (checks them where it can). */
  mask(shares: Uint8Array[]): Uint8Array;
}

/** MASCOT: one ε per mask; the client checks each triple (`webmpc_spdz::clients`). */
function mascotWire(kind: ClientInputKind, field: FieldName, input: bigint | number): ClientValue {
  const kinds = programKinds(kind);
  const values = valuesOf(kind, field, input);
  const wire = new Uint8Array(16 * kinds.length);
  kinds.forEach((k, i) => wireValue(k, values[i]!, wire, 16 * i));
  const perClient = kinds.reduce((n, k) => n + masksOf(k), 0);
  const kindBytes = Uint8Array.from(kinds.flatMap((k) => [k.type === 'field' ? 0 : k.type === 'unsigned' ? 1 : 2, k.type === 'field' ? 0 : k.bits]));
  return {
    maskBytes: perClient * SHARE_BYTES,
    mask(shares) {
      const eps = callWasm((w) => w.clientMaskedInputs(field, kindBytes, wire, shares) as Uint8Array);
      wire.fill(0);
      return eps;
    },
  };
}

/**
 * authgc: the value with its presence bit (x·2 + 1, `bits + 1` bits), masked with a fresh check
 * (`webmpc_authgc::online::clients`: the servers test the masks this client saw).
 */
function authgcValue(kind: { readonly bits: number }, input: bigint | number): ClientValue {
  const width = kind.bits + 1;
  let x: bigint;
  try {
    x = BigInt(input);
  } catch {
    throw invalid('input must be an integer');
  }
  if (x < 0n || x >= 1n << BigInt(kind.bits)) throw invalid(`input must be an unsigned ${kind.bits}-bit integer (0 to 2^${kind.bits} − 1)`);
  const v = (x << 1n) | 1n;
  const bytes = Uint8Array.from({ length: Math.ceil(width / 8) }, (_, i) => Number((v >> BigInt(8 * (Math.ceil(width / 8) - 1 - i))) & 0xffn));
  return {
    maskBytes: clientFormat(width).shareBytes,
    mask(shares) {
      const m = callWasm((w) => w.authgcClientMessage(width, shares, bytes) as Uint8Array);
      bytes.fill(0);
      return m;
    },
  };
}

/**
 * Gives one input to a client–server run and resolves with its public outputs. With MASCOT the
 * client checks its masks (a server that sent inconsistent shares is `CHEATING_DETECTED`); with
 * authgc the servers check them for it, under MACs, against a test it draws (a server that changed
 * them gets it refused: `CLIENT_REFUSED`). It accepts the outputs only if every server sent the
 * same; `CLIENT_REFUSED` if the servers did not take its input.
 */
export async function submit(options: SubmitOptions): Promise<SubmitResult> {
  const { servers, sessionId, signal } = options ?? ({} as SubmitOptions);
  if (!Array.isArray(servers) || servers.length < 2) throw invalid('submit needs at least two servers');
  if (typeof sessionId !== 'string' || !SESSION_ID.test(sessionId)) throw invalid('sessionId must be 1 to 128 characters of [A-Za-z0-9_.:-]');
  const timeoutMs = options.timeoutMs ?? 120_000;
  const identity = options.identity ?? (await generateIdentity());
  const progress = (p: ClientServerProgress) => options.onProgress?.(p);
  const links: Transport[] = [];
  const recv = async (j: number, what: string): Promise<Uint8Array> => {
    const m = await links[j]!.recv(0, { timeoutMs, ...(signal ? { signal } : {}) });
    if (m[0] === DROPPED) {
      const r = parse(m, DROPPED, what) as { reason?: unknown };
      throw new WebmpcError('CLIENT_REFUSED', `server ${j} refused this client: ${typeof r?.reason === 'string' ? r.reason.slice(0, 200) : 'no reason given'}`);
    }
    return m;
  };
  try {
    await Promise.all(
      servers.map(async (srv, j) => {
        if (!(srv?.publicKey instanceof Uint8Array) || typeof srv.connect !== 'function') throw invalid(`servers[${j}] must be { publicKey, connect }`);
        const inner = await srv.connect();
        links[j] = await secureTransport(inner, {
          identity,
          sessionId: handshakeId(sessionId, j),
          trust: 'pinned',
          peers: [srv.publicKey, identity.publicKey],
          handshakeTimeoutMs: JOIN_TIMEOUT_MS,
          ...(signal ? { signal } : {}),
        });
        await links[j]!.send(0, json(JOIN, { v: VERSION }));
      }),
    );
    const welcomes = await Promise.all(
      servers.map(async (_, j) => parse(await recv(j, 'welcome'), WELCOME, 'welcome') as { field?: unknown; protocol?: unknown; input?: unknown }),
    );
    const w0 = welcomes[0]!;
    const authgc = w0.protocol === 'authgc';
    if (!authgc && w0.field !== 'prime' && w0.field !== 'binary') throw malformed('welcome', 0);
    const kind = checkKind(w0.input);
    if (authgc && kind.type !== 'unsigned') throw malformed('welcome', 0);
    welcomes.forEach((w, j) => {
      if (w.protocol !== w0.protocol || w.field !== w0.field || !sameKind(checkKind(w.input), kind)) {
        throw new ProtocolAbort('CHEATING_DETECTED', `client–server: servers 0 and ${j} ask for different inputs`);
      }
    });
    // The input, checked before anything of it is sent.
    const prepared = authgc ? authgcValue(kind as { bits: number }, options.input) : mascotWire(kind, w0.field as FieldName, options.input);
    // Every server took this client: it waits for the window to close.
    progress({ phase: 'window' });

    const masks = await Promise.all(servers.map(async (_, j) => {
      const m = await recv(j, 'masks');
      if (m[0] !== MASKS || m.length !== 9 + prepared.maskBytes) throw malformed('masks', j);
      const view = new DataView(m.buffer, m.byteOffset + 1, 8);
      const got = { index: view.getUint32(0, true), clients: view.getUint32(4, true), shares: m.slice(9) };
      m.fill(0);
      return got;
    }));
    progress({ phase: 'masks' });
    const { index, clients } = masks[0]!;
    masks.forEach((m, j) => {
      // (Which of the two deviated the client cannot tell.)
      if (m.index !== index || m.clients !== clients || index >= clients) throw new ProtocolAbort('CHEATING_DETECTED', `client–server: servers 0 and ${j} disagree on this client's slot`);
    });
    const eps = prepared.mask(masks.map((m) => m.shares));
    for (const m of masks) m.shares.fill(0);
    const sodium = await loadSodium();
    // A client cancelled before its input left sends nothing (the servers drop it).
    if (signal?.aborted) throw new WebmpcError('ABORTED', 'submit cancelled');
    await Promise.all(
      servers.map(async (_, j) => {
        const mine = eps.slice();
        options._cheat?.input?.(j, mine);
        const signature = sodium.crypto_sign_detached(signedMessage(sessionId, await sha256(mine)), identity.secretKey);
        options._cheat?.signature?.(j, signature);
        await links[j]!.send(0, message(INPUT, concatBytes([signature, mine])));
      }),
    );
    progress({ phase: 'inputs' });
    const results = await Promise.all(servers.map(async (_, j) => parse(await recv(j, 'result'), RESULT, 'result') as { outputs?: unknown; counted?: unknown }));
    const first = JSON.stringify([results[0]!.outputs, results[0]!.counted]);
    results.forEach((r, j) => {
      if (JSON.stringify([r.outputs, r.counted]) !== first) throw new ProtocolAbort('CHEATING_DETECTED', `client–server: servers 0 and ${j} sent different outputs`);
    });
    const { outputs: outs, counted } = results[0]!;
    if (!Array.isArray(outs) || !outs.every((o) => typeof o === 'string' && /^-?[0-9]{1,40}$/.test(o))) throw malformed('result', 0);
    if (!Number.isSafeInteger(counted) || (counted as number) < 1 || (counted as number) > clients) throw malformed('result', 0);
    progress({ phase: 'done' });
    return { outputs: (outs as string[]).map((o) => BigInt(o)), index, clients, counted: counted as number };
  } finally {
    await Promise.all(links.map((t) => t?.close().catch(() => {})));
  }
}
