/**
 * `authgc`: multi-party authenticated garbling (Wang–Ranellucci–Katz, "Global-Scale Secure
 * Multiparty Computation", CCS 2017) among n ≥ 2 parties, the Rust `webmpc_authgc` protocol over
 * the session's transport.
 *
 * **What it protects against.** Malicious parties: any n − 1 of the n parties may be corrupted
 * and deviate arbitrarily (send anything, stop at any point, collude). Security is **with
 * abort**: a cheater can make the honest parties abort, but it cannot learn anything beyond its
 * own outputs, and it cannot make an honest party accept a wrong output (except with probability
 * about 2^-ρ, ρ = 40 by default, plus the computational terms of the hashes and OT). Whether to
 * abort may depend on the cheater's choices, never on an honest party's inputs. **Aborts need not
 * be unanimous**: outputs are released in a last round, so a party that cheats there (or stops
 * there) can leave some honest parties with their outputs and others with an abort; with private
 * outputs ({@link CircuitJob.outputs} naming a subset), a corrupt recipient may abort after it
 * learned its own outputs (designated abort). Every abort is a typed error; a party that stops
 * answering is a `PEER_DISCONNECTED`/`TIMEOUT` from the transport. Nothing protects against what
 * the ideal functionality allows: a corrupt party choosing its own inputs, or not taking part.
 *
 * **How.** Every pair of parties runs base OTs and KOS Δ-OT once per session (the setup); F_Pre
 * (multi-party TinyOT with BDOZ-style MACs: Π_aBit with its consistency check, Π_aShare's global-key
 * check, Π_HaAND, Π_LaAND with its triple check, bucketing with a MAC check on every revealed bit)
 * makes authenticated AND triples and wire masks for a bound on the circuit size (function-
 * independent preprocessing, `Session.preprocess`, before any circuit or input is known); every
 * party but the evaluator garbles its share of each AND gate (function-dependent), masked inputs
 * are broadcast with abort, and the evaluator checks every decrypted row's MAC under its own key
 * (online). Outputs go to all parties or to designated ones only: a private output's mask shares
 * reach its recipients alone. Streamed circuits run garbling and evaluation interleaved, chunk by
 * chunk, in memory bounded by a chunk.
 *
 * **Errors** are typed: a failed check is a {@link ProtocolAbort} `CHEATING_DETECTED` (or
 * `MALFORMED_MESSAGE`) with `phase` (`'setup'`, `'function-independent preprocessing'`,
 * `'function-dependent preprocessing'`, `'online'`), `check` (which check failed) and `peer`;
 * messages never carry a secret. Security is with abort, **not identifiable abort**: `peer` is
 * set only where the failed check proves that party deviated (its own message failed a check
 * only its own values determine: a MAC on a share it opened, a commitment it made, a row whose
 * labels only it sent). Many checks cannot tell: the evaluator rebuilds a garbler's labels partly
 * from tags the other garblers hold for it, so a corrupt garbler can make an honest garbler's row
 * fail; sums and broadcast digests mix everyone's values. Then `peer` is undefined and the message
 * says the check cannot tell which party deviated. With two parties every check names the other
 * party. On any failure the
 * session closes its transport with the error, so every peer aborts at once rather than at a
 * timeout. Progress is reported under the same four phase names.
 *
 * **Parallel instances** (`threads` > 1 in a session that runs in workers): the AND triples and
 * wire masks of function-independent preprocessing — asked for with `Session.preprocess`, or
 * what a prepared circuit needs before it runs — are shared out between this party's F_Pre (the
 * primary) and parallel instances of it, each in a worker of its own over a sub-channel, set up
 * with this party's global key Δ_i (see `RealPreprocessor::setup_with_delta` in the Rust crate
 * for why that is sound). What the instances make joins the primary's pools in instance order,
 * at every party alike, after a check across all parties that every party's instances used that
 * party's one key (a failure is `CHEATING_DETECTED`, check `instance global-key consistency
 * check`). Work is split only into parts big enough to keep the bucket size of the whole (so
 * splitting costs no CPU time: AES-128 uses at most two parts); streamed circuits, and prepared
 * ones above 2^18 AND gates, draw their triples from the primary alone, as they run.
 */
import { PreparedCircuit, preparedHandle, prepareCircuit, type CircuitSource } from '../circuit/source.js';
import { callWasm, wasm } from '../engine/wasm.js';
import { WebmpcError } from '../errors.js';
import type { CircuitJob, InstanceContext, Outputs, PartyEnv, ProtocolContext, ProtocolModule } from './types.js';
import { bytesBesideRoles, sha256, utf8 } from './util.js';
import { pieces } from './yao2pc.js';

type RawAuthGc = import('../wasm-gen/webmpc.js').AuthGcSession;
type RawPrepared = import('../wasm-gen/webmpc.js').PreparedCircuit;

/** The client input protocol's sizes for a `width`-bit client value (`webmpc_authgc::online::clients`). */
export function clientFormat(width: number): { checkBits: number; shareBytes: number; messageBytes: number } {
  return callWasm((w) => w.authgcClientFormat(width) as { checkBits: number; shareBytes: number; messageBytes: number });
}

/** The default statistical security parameter: a cheater escapes a check with probability ≈ 2^-40. */
export const AUTHGC_DEFAULT_RHO = 40;

/** Most parties: output recipients travel as 32-bit masks. */
const MAX_PARTIES = 32;

/**
 * Prepared circuits with at most this many AND gates are garbled in full before the inputs are
 * processed (function-dependent phase, then online); larger ones run interleaved like streams,
 * so neither F_Pre's working memory nor the evaluator's stored tables grow with the circuit.
 */
const PHASED_MAX_AND_GATES = 1 << 18;

/** The roles of an `authgc` run. */
export interface AuthGcRoleOptions {
  /** The evaluating party (default 0); every other party garbles. */
  evaluator?: number;
  /** Statistical security parameter ρ, 40 to 128 (default 40); one setup per ρ and session. */
  rho?: number;
  /** @internal The client inputs of a circuit with client inputs (`serve` gives them). */
  clients?: AuthGcClientStage;
}

/**
 * @internal The two runs `serve` (`ts/clients.ts`) makes of a circuit with client inputs
 * (owner −1; see `webmpc_authgc::online::clients`): `prepare` garbles it and resolves with this
 * server's mask shares for every client value (`client_share_bytes(width)` bytes each, in circuit
 * order), then `run` takes, per client value, a flag byte (1: that client's message follows, 0:
 * none) and resolves with `{ outputs, refused }` (refused: positions among the client values).
 */
export type AuthGcClientStage =
  | { readonly stage: 'prepare' }
  | {
      readonly stage: 'run';
      readonly bytes: Uint8Array;
      /** SHA-256 of `bytes` (hex): what the servers agree on (the bytes stay this party's own). */
      readonly digest: string;
    };

/** The client messages ride beside the agreed roles under a symbol key (see localOptions). */
const CLIENT_BYTES: unique symbol = Symbol('webmpc.authgc.clients');

/** Owner of a client input value on the Wasm side. */
const CLIENT_OWNER = 0xffffffff;

/**
 * Function-independent preprocessing for `authgc` (`Session.preprocess('authgc', …)`): pools AND
 * triples and wire masks before any circuit or input is known, so that later runs use them. Give
 * the sizes, or a circuit (and how many runs of it) to take them from.
 */
export interface AuthGcPreprocessOptions {
  /** AND triples to pool: one per AND gate of the circuits to come. */
  andGates?: number;
  /** Wire masks to pool: one per AND gate and per input bit of the circuits to come (default `andGates`). */
  masks?: number;
  /** Instead of the sizes: a circuit whose AND gates and input bits set them. */
  circuit?: CircuitSource | PreparedCircuit;
  /** With `circuit`: the number of runs to preprocess for (default 1). */
  runs?: number;
  /** Statistical security parameter ρ (as for the run that will use the material). */
  rho?: number;
}

/** What `authgc` keeps per session: one set-up party per ρ (opaque Wasm objects). */
export interface AuthGcState {
  readonly parties: Map<number, { free(): void }>;
}

/** The types `authgc` is written over. */
export interface AuthGcTypes {
  readonly computes: 'circuit';
  readonly roleOptions: AuthGcRoleOptions;
  readonly roles: AuthGcRoles;
  readonly preprocessOptions: AuthGcPreprocessOptions;
  readonly preprocessParams: { readonly andGates: number; readonly masks: number; readonly rho: number };
  readonly state: AuthGcState;
}

function invalid(message: string): WebmpcError {
  return new WebmpcError('INVALID_ARGUMENT', message);
}

function rhoOf(rho: unknown): number {
  const r = rho ?? AUTHGC_DEFAULT_RHO;
  if (!Number.isInteger(r) || (r as number) < 40 || (r as number) > 128) throw invalid('rho must be a whole number from 40 to 128');
  return r as number;
}

/** The roles the parties agree on. */
type AuthGcRoles = {
  readonly evaluator: number;
  readonly rho: number;
  readonly clients?: { readonly stage: 'prepare' } | { readonly stage: 'run'; readonly digest: string };
};
type WithClientBytes = AuthGcRoles & { readonly [CLIENT_BYTES]?: Uint8Array };

function roles(options: AuthGcRoleOptions, env: PartyEnv): AuthGcRoles {
  const evaluator = options.evaluator ?? 0;
  if (!Number.isInteger(evaluator) || evaluator < 0 || evaluator >= env.parties) {
    throw invalid(`evaluator must be a party index in [0, ${env.parties})`);
  }
  const base = { evaluator, rho: rhoOf(options.rho) };
  const c = options.clients;
  if (c === undefined) return base;
  if (c?.stage === 'prepare') return { ...base, clients: { stage: 'prepare' } };
  if (c?.stage === 'run' && c.bytes instanceof Uint8Array && typeof c.digest === 'string' && /^[0-9a-f]{64}$/.test(c.digest)) {
    const agreed: WithClientBytes = { ...base, clients: { stage: 'run', digest: c.digest }, [CLIENT_BYTES]: c.bytes };
    return agreed;
  }
  throw invalid('authgc: clients must be { stage: "prepare" } or { stage: "run", bytes, digest } as serve makes them');
}

/** Circuits with client inputs run only through serve's two stages, prepared in full. */
function check(job: CircuitJob<AuthGcRoles>): void {
  const hasClients = job.owners.includes(-1);
  if (hasClients && job.roles.clients === undefined) throw invalid('authgc: the circuit has client inputs: compute parties run it through serve()');
  if (!hasClients && job.roles.clients !== undefined) throw invalid('authgc: clients given, but the circuit has no client inputs');
  if (hasClients && !(job.circuit instanceof PreparedCircuit)) throw invalid('authgc: a circuit with client inputs cannot be streamed');
}

const LIMIT = 2 ** 30;

function size(name: string, v: unknown): number {
  if (!Number.isInteger(v) || (v as number) < 0 || (v as number) > LIMIT) throw invalid(`${name} must be a whole number from 0 to 2^30`);
  return v as number;
}

/** AND gates and input bits of a prepared circuit. */
function circuitSizes(c: PreparedCircuit): { andGates: number; inputBits: number } {
  const raw = preparedHandle(c) as RawPrepared;
  const andGates = callWasm((w) => w.authgcAndGates(raw));
  return { andGates, inputBits: c.inputWidths.reduce((a, b) => a + b, 0) };
}

function preprocessParams(options: AuthGcPreprocessOptions, _env: PartyEnv): AuthGcTypes['preprocessParams'] {
  const rho = rhoOf(options.rho);
  if (options.circuit !== undefined) {
    if (options.andGates !== undefined || options.masks !== undefined) throw invalid('give either circuit (and runs) or andGates/masks, not both');
    const runs = options.runs ?? 1;
    if (!Number.isInteger(runs) || runs < 1) throw invalid('runs must be a whole number ≥ 1');
    const prepared = prepareCircuit(options.circuit);
    try {
      const { andGates, inputBits } = circuitSizes(prepared);
      return { andGates: size('andGates', andGates * runs), masks: size('masks', (andGates + inputBits) * runs), rho };
    } finally {
      if (prepared !== options.circuit) prepared.free();
    }
  }
  if (options.runs !== undefined) throw invalid('runs applies only with circuit');
  const andGates = size('andGates', options.andGates ?? 0);
  const masks = size('masks', options.masks ?? andGates);
  return { andGates, masks, rho };
}

/** This party's set-up authgc party for `rho`, running the setup (base OTs with every peer) on first use. */
async function setup(ctx: ProtocolContext<AuthGcState>, rho: number): Promise<RawAuthGc> {
  const state = (ctx.state ??= { parties: new Map() });
  const have = state.parties.get(rho);
  if (have) return have as RawAuthGc;
  ctx.progress('setup', 0, 1);
  // One instance per ρ: each has its own Δ's, OT instances and hash tweaks.
  const sid = await sha256(ctx.sessionId, utf8(`rho=${rho}`));
  const raw = await ctx.call(() => wasm().authgcSetup(ctx.transport, sid, { rho }) as Promise<RawAuthGc>);
  state.parties.set(rho, raw);
  ctx.progress('setup', 1, 1);
  return raw;
}

/** The recipients of each output as the Wasm side takes them: a bit mask, 0xffffffff for everyone. */
function recipientMasks(outputs: readonly (readonly number[])[], parties: number): Uint32Array {
  return Uint32Array.from(outputs, (ps) => (new Set(ps).size === parties ? 0xffffffff : ps.reduce((m, p) => (m | (1 << p)) >>> 0, 0)));
}

/** A preprocessing part a parallel instance makes (`null`: this instance has no part this time). */
type InstancePart = { rho: number; andGates: number; masks: number; delta: Uint8Array } | null;

/** What an instance hands back: its material for the primary's pools (secret bytes). */
type InstanceMaterial = { bytes: Uint8Array; triples: number; masks: number } | null;

/**
 * Adds `andGates` AND triples and `masks` wire masks to this party's pools. With parallel
 * instances the work is shared out deterministically (the same at every party, so the pools stay
 * in step): the primary makes part 0 while instance i makes part i, with this party's Δ_i; the
 * instances' material then joins the pools after the primary's, in instance order, once the
 * instance key check across all parties passed. The key and the material are wiped once handed
 * over.
 */
async function generate(ctx: ProtocolContext<AuthGcState>, raw: RawAuthGc, rho: number, andGates: number, masks: number): Promise<void> {
  if (andGates + masks === 0) return;
  const progress = (phase: string, done: number, total: number) => ctx.progress(phase, done, total);
  const count = ctx.instances?.count ?? 0;
  const parts = count > 0 ? (callWasm((w) => w.authgcInstanceParts(andGates, masks, count + 1, rho)) as number) : 1;
  if (parts <= 1) {
    await ctx.call(() => raw.preprocess(andGates, masks, progress) as Promise<void>);
    return;
  }
  const instances = ctx.instances!;
  const part = (n: number, i: number) => Math.floor(n / parts) + (i < n % parts ? 1 : 0);
  const delta = raw.deltaForInstances() as Uint8Array;
  let made: InstanceMaterial[] = [];
  try {
    const args: InstancePart[] = Array.from({ length: count }, (_, i) =>
      i + 1 < parts ? { rho, andGates: part(andGates, i + 1), masks: part(masks, i + 1), delta: delta.slice() } : null,
    );
    const mine = ctx.call(() => raw.preprocess(part(andGates, 0), part(masks, 0), progress) as Promise<void>);
    const theirs = instances.run('preprocess', args).then((m) => (made = m as InstanceMaterial[]));
    await Promise.all([mine, theirs]);
    const bytes = made.filter((m): m is NonNullable<InstanceMaterial> => m !== null).map((m) => m.bytes);
    await ctx.call(() => raw.putMaterial(bytes) as Promise<unknown>);
  } finally {
    delta.fill(0);
    for (const m of made) m?.bytes.fill(0);
  }
}

/** A parallel instance's part of the preprocessing: made under the party's Δ_i, handed back whole. */
async function preprocessInstance(ictx: InstanceContext, args: unknown): Promise<InstanceMaterial> {
  const a = args as InstancePart;
  if (a === null) return null;
  const { rho, andGates, masks, delta } = a;
  try {
    const state = (ictx.state ??= { parties: new Map() }) as AuthGcState;
    let raw = state.parties.get(rho) as RawAuthGc | undefined;
    if (!raw) {
      ictx.progress('setup', 0, 1);
      const sid = await sha256(ictx.sessionId, utf8(`rho=${rho}`));
      raw = await ictx.call(() => wasm().authgcSetupInstance(ictx.transport, sid, { rho }, delta, ictx.index) as Promise<RawAuthGc>);
      state.parties.set(rho, raw);
      ictx.progress('setup', 1, 1);
    }
    const r = raw;
    const progress = (phase: string, done: number, total: number) => ictx.progress(phase, done, total);
    if (andGates + masks > 0) await ictx.call(() => r.preprocess(andGates, masks, progress) as Promise<void>);
    return (await ictx.call(() => r.takeMaterial() as Promise<unknown>)) as InstanceMaterial;
  } finally {
    delta.fill(0);
  }
}

async function run(ctx: ProtocolContext<AuthGcState>, job: CircuitJob<AuthGcTypes['roles']>): Promise<Outputs> {
  const { evaluator, rho } = job.roles;
  const raw = await setup(ctx, rho);
  const owners = Uint32Array.from(job.owners, (p) => (p === -1 ? CLIENT_OWNER : p));
  const outputs = recipientMasks(job.outputs, ctx.parties);
  const inputs = [...job.inputs];
  const progress = (phase: string, done: number, total: number) => ctx.progress(phase, done, total);
  const { circuit } = job;
  const clients = job.roles.clients;
  if (circuit instanceof PreparedCircuit) {
    const handle = preparedHandle(circuit) as RawPrepared;
    const andGates = callWasm((w) => w.authgcAndGates(handle));
    if (clients?.stage === 'run') {
      const bytes = (job.roles as WithClientBytes)[CLIENT_BYTES];
      if (!bytes) throw invalid('authgc: the client messages did not reach the engine');
      // (`serve` reads this shape; only it can run a circuit with client inputs.)
      return ctx.call(() => raw.runWithClients(handle, evaluator, owners, outputs, inputs, bytes, progress) as Promise<Outputs>);
    }
    if (clients && andGates > PHASED_MAX_AND_GATES) {
      // Too large to garble whole before the clients answer: only the input masks are reserved
      // now (the clients need theirs); the run garbles and evaluates chunk by chunk.
      await ctx.call(() => raw.reserveInputs(handle, evaluator, owners, outputs) as Promise<void>);
      return (await ctx.call(async () => raw.clientMaskShares(owners))) as unknown as Outputs; // (read by `serve`)
    }
    if (clients || andGates <= PHASED_MAX_AND_GATES) {
      if (ctx.instances) {
        // What prepare would draw from the primary's F_Pre, shared out over the instances first:
        // a mask per AND gate and input bit, and the check masks of each client value.
        const inputBits = job.shape.inputWidths.reduce((a, b) => a + b, 0);
        const checks = clientFormat(1).checkBits * job.owners.filter((p) => p === -1).length;
        const pooled = raw.pooled() as { triples: number; masks: number };
        await generate(ctx, raw, rho, Math.max(0, andGates - pooled.triples), Math.max(0, andGates + inputBits + checks - pooled.masks));
      }
      await ctx.call(() => raw.prepare(handle, evaluator, owners, outputs, progress) as Promise<void>);
      if (clients) return (await ctx.call(async () => raw.clientMaskShares(owners))) as unknown as Outputs; // (read by `serve`)
    }
    return ctx.call(() => raw.run(handle, evaluator, owners, outputs, inputs, progress) as Promise<Outputs>);
  }
  const pull = pieces(circuit);
  return ctx.call(
    () => raw.runStream(circuit.prefix, circuit.hash, pull, evaluator, owners, outputs, inputs, progress) as Promise<Outputs>,
  );
}

/** The `authgc` protocol module. */
export const authgc: ProtocolModule<AuthGcTypes> = {
  name: 'authgc',
  // 2: F_Pre's hash tweaks carry the instance index (parallel instances share Δ_i).
  // 3: F_Pre's messages in fewer flights (the two Δ-OT directions of a pair at once, chunks
  //    pipelined; the aBit coin commitment in the Δ-OT flight; setup's X digest with Π_aShare's
  //    commitments): a version 2 peer would misread them.
  // 4: the masks' bits come from the triples' aBit run (no share batch of their own): a version 3
  //    peer would wait for a share batch that never comes.
  // 5: setup ends after the OT instances; Π_aShare's global-key check rides on the first batch's
  //    aBit run: a version 4 peer would wait for setup's own aBit run.
  // 6: a prepared run's agreement leads the input masks' opening (one message, one flight fewer):
  //    a version 5 peer would read it as a message of the wrong length.
  // 7: prepare's agreement leads F_Pre's first message (the aBit run's first Δ-OT flight) when
  //    there is a batch to make: a version 6 peer would wait for a bare agreement.
  version: 7,
  security: 'malicious (abort)',
  protects:
    'Inputs stay private and outputs correct against any n − 1 colluding parties that deviate at will; ' +
    'a cheater can only make the others abort (with a typed error naming the phase and the check, and a party ' +
    'only where the check proves it deviated: abort, not identifiable abort). ' +
    'Aborts need not be unanimous: a party that cheats or stops in the last (output) round can leave ' +
    'some honest parties with their outputs and others with an abort.',
  computes: 'circuit',
  parties: { min: 2, max: MAX_PARTIES },
  roleOptions: ['evaluator', 'rho', 'clients'],
  roles,
  // The client inputs go to the engine worker beside the agreed roles (only their digest is agreed).
  localOptions: bytesBesideRoles(CLIENT_BYTES),
  check,
  run,
  preprocess: {
    options: ['andGates', 'masks', 'circuit', 'runs', 'rho'],
    params: preprocessParams,
    async run(ctx, params) {
      const raw = await setup(ctx, params.rho);
      await generate(ctx, raw, params.rho, params.andGates, params.masks);
    },
  },
  free(state: AuthGcState): void {
    for (const raw of state.parties.values()) raw.free();
    state.parties.clear();
  },
  instanceTasks: { preprocess: preprocessInstance },
  freeInstance(state: unknown): void {
    authgc.free!(state as AuthGcState);
  },
};
