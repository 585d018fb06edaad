/**
 * `teleport-yao`: garbled-circuit **teleportation** between two parties (Lu et al., ESORICS
 * 2021), the Rust `webmpc_teleport` drivers over the session's transport. A semi-trusted enclave
 * beside the evaluator (the enclave-server, `webmpc enclave-server`) regenerates the garbled
 * circuit from the garbler's sealed seed natively (AES-NI) and streams the tables to the
 * evaluator locally: the garbler sends only its seed and input labels, O(input) bytes, and does
 * almost no work.
 *
 * ```ts
 * // Open Enclave: pin the MRENCLAVE; the simulation backend (development only): pin the program.
 * const enclave = { url: 'ws://127.0.0.1:8790', policy: { simulatedMeasurements: [PINNED_HEX] }, allowSimulatedEnclave: true };
 * await s.run(circuit, { inputs, protocol: 'teleport-yao', mode: 'semi-honest', enclave });
 * ```
 *
 * Roles: party `garbler` (default 0) garbles (by seed) and the other party evaluates; the
 * evaluator reaches the enclave-server (`enclave.url`), the garbler needs no network access
 * beyond its peer (the evaluator relays the enclave's evidence and the sealed seed, which it
 * cannot open). Both parties check the enclave's evidence against their own pinned `policy`
 * once per session (then one X25519 key seals every job's seed), and both refuse the simulation
 * backend unless `allowSimulatedEnclave: true`.
 *
 * What it protects against (`mode`, required):
 * - `'semi-honest'`: every entity (garbler, evaluator, enclave) follows the protocol; each input
 *   stays private against any one of them that is curious. Outputs revealed to the garbler are
 *   reported to it by the evaluator as bits, which a deviating evaluator could change.
 * - `'malicious'`: any **one** of the three may deviate; the evaluator checks the enclave's
 *   tables, decoding bits and labels and the garbler's labels against the garbler's σ/τ
 *   commitments and aborts with `ENCLAVE_CHECK_FAILED` (naming the check) — security with abort,
 *   no accountability. The garbler garbles the circuit itself to compute τ (its work is then
 *   circuit-sized, its communication still not). Outputs revealed to the garbler come as output
 *   labels it checks, so a deviating evaluator can make the garbler abort but not change its
 *   output.
 * - Neither mode protects against the enclave **colluding** with a party: with the garbler it
 *   learns the evaluator's input, with the evaluator the garbler's. The simulation backend has no
 *   hardware protection at all: the evaluator's host (the enclave-server's) can read the
 *   garbler's seed, hence its input, and the evaluator's share.
 * - Both parties' secrets reach the enclave sealed to its attested key (the garbler's seed, the
 *   evaluator's x2⁰), and the replies that would reveal the evaluator's input are sealed to the
 *   evaluator: with a real enclave, the enclave-server's host and the network learn neither.
 *   The evidence answers both parties' fresh nonces, so a recorded one cannot be replayed.
 *
 * Independent runs in parallel (`Session.runMany` with more than one agreed thread, in worker
 * mode; not when the evaluator gave a WebSocket class of its own, which exists only on its
 * thread): the runs are cut into contiguous chunks, the same cut at both parties, and parallel
 * instance i runs chunk i in an engine worker of its own, over sub-channel i of the transport,
 * exactly as the primary runs chunk 0: its evaluator opens a link of its own to the enclave, and
 * both parties check the enclave's evidence and agree a sealing key for that instance alone,
 * under the instance's session id (`instanceSessionId(protocol id, i)`). Every job's id, hence
 * its hash tweak tag, is derived from that session id and the job's number, and every job's
 * garbling comes from a fresh seed of the garbler's (its own Δ and labels). So no two instances
 * share a sealing key, a seed or a tweak tag. The instances' attested sessions are kept in their
 * workers for the session's later calls. At most 4 instances run (the enclave-server's default
 * limit of sessions per client), whatever the threads.
 *
 * The evaluator learns every output (the enclave hands it every decoding bit): an output revealed
 * to the garbler alone is refused with `INVALID_ARGUMENT`. Circuits must be whole (a
 * `PreparedCircuit` or any source `prepareCircuit` takes): the enclave receives the circuit twice
 * (hashing, then garbling), which a one-pass stream cannot give.
 */
import { PreparedCircuit } from '../circuit/source.js';
import { checkEnclaveOptions, enclaveKey, openEvaluatorLink, policyBytes, type EnclaveOptions } from '../enclave/client.js';
import { DEFAULT_MAX_SESSIONS_PER_CLIENT, type EnclaveLink } from '../enclave/link.js';
import { callModule, loadModule } from '../engine/modules.js';
import { isNode } from '../engine/wasm.js';
import { WebmpcError } from '../errors.js';
import type { CircuitJob, Outputs, PartyEnv, ProtocolContext, ProtocolModule } from './types.js';
import { sha256 } from './util.js';

// From the teleport module (webmpc_teleport_bg.wasm), loaded by the first attestation. Circuits
// cross into it as their binary form (`PreparedCircuit.binary`), parsed again there.
type RawGarbler = import('../wasm-gen/webmpc_teleport.js').TeleportGarbler;
type RawEvaluator = import('../wasm-gen/webmpc_teleport.js').TeleportEvaluator;
type RawCircuit = import('../wasm-gen/webmpc_teleport.js').TeleportCircuit;

/** The security setting of a teleport run. */
export type TeleportMode = 'semi-honest' | 'malicious';

/** The options `teleport-yao` adds to `Session.run`. */
export interface TeleportYaoRoleOptions {
  /** The garbling party, 0 or 1 (default 0); the other evaluates and reaches the enclave. */
  garbler?: number;
  /** `'semi-honest'` or `'malicious'` (see the module docs): required, both parties the same. */
  mode?: TeleportMode;
  /** The enclave: `url` (the evaluator), `policy` and `allowSimulatedEnclave` (both). */
  enclave?: EnclaveOptions;
}

/** The options of `Session.preprocess('teleport-yao')`: sets the attested session up ahead of time. */
export interface TeleportYaoPreprocessOptions {
  garbler?: number;
  enclave?: EnclaveOptions;
}

/** This party's own enclave options, carried beside the agreed roles but never compared or sent. */
const LOCAL: unique symbol = Symbol('webmpc.teleport.enclave');

/** The agreed roles (the enclave options ride along under a symbol key, outside the record). */
export type TeleportYaoRoles = { readonly garbler: number; readonly mode: TeleportMode };
type WithLocal<T> = T & { readonly [LOCAL]?: EnclaveOptions };

/** A Wasm object, opaque here (its generated types stay out of the published declarations). */
interface Opaque {
  free(): void;
}

/** This party's attested session for one garbler index. */
export interface TeleportSide {
  readonly key: string;
  /** The garbler's Wasm session (a `TeleportGarbler`), or the evaluator's (`TeleportEvaluator`). */
  readonly garbler?: Opaque;
  readonly evaluator?: Opaque;
  readonly link?: EnclaveLink;
}

/** The attested sessions of one SDK session (one per garbler index) and the last circuit. */
export interface TeleportYaoState {
  readonly sides: Map<number, TeleportSide>;
  circuit: { readonly hash: string; readonly source: PreparedCircuit; readonly raw: Opaque } | undefined;
}

/** The types `teleport-yao` is written over. */
export interface TeleportYaoTypes {
  readonly computes: 'circuit';
  readonly roleOptions: TeleportYaoRoleOptions;
  readonly roles: TeleportYaoRoles;
  readonly preprocessOptions: TeleportYaoPreprocessOptions;
  readonly preprocessParams: { readonly garbler: number };
  readonly state: TeleportYaoState;
}

const NAME = 'teleport-yao';

function invalid(message: string): WebmpcError {
  return new WebmpcError('INVALID_ARGUMENT', message);
}

function garblerOf(options: { garbler?: number }): number {
  const garbler = options.garbler ?? 0;
  if (garbler !== 0 && garbler !== 1) throw invalid('garbler must be 0 or 1');
  return garbler;
}

function roleOf(env: PartyEnv, garbler: number): 'garbler' | 'evaluator' {
  return env.party === garbler ? 'garbler' : 'evaluator';
}

function withLocal<T extends object>(params: T, enclave: EnclaveOptions): WithLocal<T> {
  return Object.assign(params, { [LOCAL]: enclave }) as WithLocal<T>;
}

function localOf(params: object): EnclaveOptions {
  const o = (params as WithLocal<object>)[LOCAL];
  if (!o) throw invalid(`${NAME} needs the enclave option`);
  return o;
}

function roles(options: TeleportYaoRoleOptions, env: PartyEnv): TeleportYaoRoles {
  const garbler = garblerOf(options);
  const mode = options.mode;
  if (mode !== 'semi-honest' && mode !== 'malicious') {
    throw invalid(`${NAME} needs mode: 'semi-honest' or 'malicious' (they protect against different things; see the docs)`);
  }
  const enclave = checkEnclaveOptions(options.enclave, roleOf(env, garbler), NAME);
  return withLocal({ garbler, mode }, enclave);
}

/** The WebSocket class a worker has by itself: the global one, or `ws` in Node (loaded on first use). */
async function platformWebSocket(): Promise<EnclaveOptions['WebSocket']> {
  if (!isNode()) return (globalThis as { WebSocket?: EnclaveOptions['WebSocket'] }).WebSocket;
  // Node's entry is hidden from bundlers: a browser build never reaches this branch. Joined at
  // run time because a constant string is folded into the import by esbuild (Vite's dependency
  // pre-bundling), whose dev server then fails to resolve it beside the pre-bundled file.
  const nodeEntry = ['..', 'net', 'node.js'].join('/');
  const node = (await import(/* webpackIgnore: true */ /* @vite-ignore */ nodeEntry)) as typeof import('../net/node.js');
  return node.nodeWebSocket();
}

/** This party's attested session for `garbler`, set up (evidence checked, key agreed) on first use. */
async function attest(ctx: ProtocolContext<TeleportYaoState>, garbler: number, enclave: EnclaveOptions): Promise<TeleportSide> {
  const state = (ctx.state ??= { sides: new Map(), circuit: undefined });
  const key = enclaveKey(enclave);
  const have = state.sides.get(garbler);
  if (have) {
    if (have.key !== key) {
      throw invalid(`${NAME}: the enclave options cannot change within a session (its attested session is set up); open a new session`);
    }
    return have;
  }
  ctx.progress('setup', 0, 1);
  const w = await loadModule('teleport');
  const sid = await sha256(ctx.sessionId, Uint8Array.of(garbler));
  const p = policyBytes(enclave);
  let side: TeleportSide;
  if (ctx.party === garbler) {
    const raw = await ctx.call(
      () => w.teleportGarblerConnect(ctx.transport, 1 - garbler, sid, p.allowSimulated, p.measurements, p.signers) as Promise<RawGarbler>,
    );
    side = { key, garbler: raw };
  } else {
    const { link, view, enclaveParty } = await ctx.call(() => openEvaluatorLink(ctx.transport, enclave, ctx.signal));
    try {
      const raw = await ctx.call(
        () => w.teleportEvaluatorConnect(view, garbler, enclaveParty, sid, p.allowSimulated, p.measurements, p.signers) as Promise<RawEvaluator>,
      );
      side = { key, evaluator: raw, link };
    } catch (err) {
      await link.close();
      throw err;
    }
  }
  state.sides.set(garbler, side);
  ctx.progress('setup', 1, 1);
  return side;
}

/** The Wasm form of `circuit`, kept for the next runs of the same circuit. */
function teleportCircuit(state: TeleportYaoState, circuit: PreparedCircuit): RawCircuit {
  const hash = Array.from(circuit.hash, (b) => b.toString(16).padStart(2, '0')).join('');
  if (state.circuit?.hash === hash && state.circuit.source === circuit) return state.circuit.raw as RawCircuit;
  state.circuit?.raw.free();
  state.circuit = undefined;
  const raw = callModule('teleport', (w) => new w.TeleportCircuit(circuit.binary));
  state.circuit = { hash, source: circuit, raw };
  return raw;
}

function check(job: CircuitJob<TeleportYaoRoles>, _env: PartyEnv): void {
  if (!(job.circuit instanceof PreparedCircuit)) {
    throw invalid(`${NAME} needs the whole circuit (the enclave reads it twice); prepare it instead of streaming it`);
  }
  const evaluator = 1 - job.roles.garbler;
  const i = job.outputs.findIndex((ps) => !ps.includes(evaluator));
  if (i >= 0) {
    throw invalid(
      `${NAME} reveals every output to the evaluator (party ${evaluator}); output value ${i} cannot go to the garbler alone`,
    );
  }
}

async function run(ctx: ProtocolContext<TeleportYaoState>, job: CircuitJob<TeleportYaoRoles>): Promise<Outputs> {
  const { garbler, mode } = job.roles;
  const side = await attest(ctx, garbler, localOf(job.roles));
  const circuit = teleportCircuit(ctx.state!, job.circuit as PreparedCircuit);
  const owners = Uint8Array.from(job.owners, (p) => (p === garbler ? 0 : 1));
  const reveal = Uint8Array.from(job.outputs, (ps) => (ps.includes(garbler) ? 1 : 0));
  const inputs = [...job.inputs];
  const total = job.shape.gates;
  if (side.garbler) {
    const raw = side.garbler as RawGarbler;
    ctx.progress('evaluating', 0, total);
    const out = await ctx.call(() => raw.runGc(circuit, mode, owners, reveal, inputs) as Promise<Outputs>);
    ctx.progress('evaluating', total, total);
    return out;
  }
  const raw = side.evaluator as RawEvaluator;
  const progress = (done: number, all: number) => ctx.progress('evaluating', done, all);
  return ctx.call(() => raw.runGc(circuit, mode, owners, reveal, inputs, progress) as Promise<Outputs>);
}

/** The `teleport-yao` protocol module. */
export const teleportYao: ProtocolModule<TeleportYaoTypes> = {
  name: NAME,
  version: 1,
  security: 'semi-honest',
  protects:
    "Semi-honest mode: inputs stay private against any one curious entity (garbler, evaluator or enclave). " +
    'Malicious mode: any one deviating entity is caught by the evaluator (abort, no blame). Both parties\' ' +
    "secrets are sealed to the attested enclave, so the enclave-server's host and the network see neither. " +
    'Never against the enclave colluding with a party. With the simulation backend there is no enclave: ' +
    "the evaluator's host can read the garbler's seed (hence the garbler's input) and the evaluator's share.",
  computes: 'circuit',
  parties: { min: 2, max: 2 },
  parallelRuns: true,
  // Each instance's evaluator holds an enclave-server session: no more instances than a server
  // with the default `maxSessionsPerClient` grants one client.
  maxParallelRuns: DEFAULT_MAX_SESSIONS_PER_CLIENT,
  wasmModule: 'teleport',
  localOptions: {
    // The enclave options go to the engine worker as plain data; a WebSocket constructor cannot
    // cross, so the worker takes its own (the global one, or `ws` in Node).
    send(params: object): unknown {
      const { WebSocket: _drop, ...plain } = localOf(params);
      return plain;
    },
    async receive(params: object, local: unknown): Promise<object> {
      const WebSocket = await platformWebSocket();
      return withLocal({ ...params }, { ...(local as EnclaveOptions), ...(WebSocket ? { WebSocket } : {}) });
    },
    // An app's own WebSocket class (a proxy, a local address) exists only on its thread. Only
    // the evaluator opens a socket; the garbler's class, if any, is never used. (An evaluator
    // that switches between its own class and the platform's within one session starts a new
    // attested session where the garbler expects the old one: the run fails, typed.)
    async bindToCallerThread(params: object, env: PartyEnv): Promise<boolean> {
      const garbler = (params as { garbler?: unknown }).garbler;
      if (typeof garbler !== 'number' || roleOf(env, garbler) !== 'evaluator') return false;
      const given = localOf(params).WebSocket;
      return given !== undefined && given !== (await platformWebSocket());
    },
  },
  roleOptions: ['garbler', 'mode', 'enclave'],
  roles,
  check,
  run,
  preprocess: {
    options: ['garbler', 'enclave'],
    params: (options: TeleportYaoPreprocessOptions, env: PartyEnv) => {
      const garbler = garblerOf(options);
      return withLocal({ garbler }, checkEnclaveOptions(options.enclave, roleOf(env, garbler), NAME));
    },
    run: async (ctx, params) => void (await attest(ctx, params.garbler, localOf(params))),
  },
  free(state: TeleportYaoState): void {
    for (const side of state.sides.values()) {
      side.garbler?.free();
      side.evaluator?.free();
      void side.link?.close();
    }
    state.sides.clear();
    state.circuit?.raw.free();
    state.circuit = undefined;
  },
};
