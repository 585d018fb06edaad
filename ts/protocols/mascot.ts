/**
 * `mascot`: arithmetic MPC for n ≥ 2 parties (Keller–Orsini–Scholl, "MASCOT", CCS 2016): the
 * Rust `webmpc_spdz` crate over the session's transport. Runs arithmetic programs from
 * `webmpc/program` ({@link ProgramBuilder}, {@link programFromBytes}) over F_p (p = 2^128 − 173)
 * or GF(2^128).
 *
 * ```ts
 * const program = await vickreyAuction({ parties: 3, bids: 3 });
 * await s.preprocess('mascot', { program });                        // optional: ahead of inputs
 * const out = await s.run(program, { protocol: 'mascot', inputs: program.encodeInputs(party, [bid]) });
 * ```
 *
 * **What it protects against.** Malicious security with abort against up to n − 1 corrupt
 * parties (dishonest majority): whatever the corrupt parties do, the honest parties' inputs stay
 * private (beyond what the outputs reveal), and an honest party either gets the correct outputs
 * or an error — never a wrong output. Values are additively secret-shared with information-
 * theoretic MACs under a global key nobody knows; triples come from oblivious transfer (KOS OT
 * extension with tweaked hashes, so the attack on the original MASCOT hash does not apply),
 * authenticated through COPE and checked by sacrifice; every opened value is MAC-checked, with
 * coins tossed only after the values they test are fixed, before any output is released, and the
 * parties compare transcripts of everything broadcast. Cheating shows up as a {@link ProtocolAbort}:
 * `MAC_CHECK_FAILED` (an opened or authenticated value was changed; the check cannot say by
 * whom), `SACRIFICE_FAILED` (a wrong triple), `CHEATING_DETECTED` (a broken commitment or a
 * broadcast seen differently, naming the `peer`), `MALFORMED_MESSAGE`. It does **not** give
 * fairness or guaranteed output: any party can make everyone abort (and a corrupt party can
 * abort after it has seen an output revealed to it). **Aborts may be selective**: messages go
 * point to point and the last check is not echoed, so a corrupt party can make one honest party
 * abort while another honest party gets its (correct) outputs; an application that needs every
 * party to agree that the run succeeded must confirm that itself after the run. Every value is a
 * uniformly random additive sharing (input masks included), so an opened output reveals its
 * value and nothing about each party's contribution. Errors never carry a secret.
 *
 * **Integer inputs are range-checked.** An input declared as a k-bit integer is input as its k
 * bits, and every bit is checked to be 0 or 1 (b² = b, one triple each) before any comparison or
 * output depends on it: a party running modified code cannot input a value outside the declared
 * range (the run aborts with `MAC_CHECK_FAILED`). Comparison results are always 0 or 1, so a
 * `select` on one never mixes its branches. Field-element inputs (`element`) are any element of
 * the field and are not checked; a comparison on one needs `{ bits }`, a promise about every
 * party's inputs that the protocol cannot check — an operand outside that width gives a wrong
 * result and can reveal the other operand, so compare field inputs only from trusted parties.
 * The builder derives every other comparison's width from the (checked) input ranges.
 *
 * **Preprocessing.** Setup (base OTs and COPE with every peer, per field) runs on the first use in
 * a session. Triples and random bits are consumed by runs and never reused; `Session.preprocess
 * ('mascot', { triples, bits })` adds them to the session's store ahead of time (while users type),
 * `{ program }` makes sure the store holds what one run of that program needs, and `run` generates
 * whatever is still missing. Progress: `'setup'`, `'bits'` and `'triples'` (items generated out
 * of the call's total), `'evaluating'` (instructions done out of the program's).
 */
import { loadModule } from '../engine/modules.js';
import { WebmpcError } from '../errors.js';
import type { FieldName } from '../program/format.js';
import { isProgram, wireInputs, type Program } from '../program/program.js';
import type { InstanceContext, Outputs, PartyEnv, ProgramJob, ProtocolContext, ProtocolModule } from './types.js';
import { bytesBesideRoles, sha256, utf8 } from './util.js';

// From the MASCOT module (webmpc_mascot_bg.wasm), loaded by the first setup. Programs cross into
// it as their encoding (`Program.bytes`), decoded again there.
type RawMascot = import('../wasm-gen/webmpc_mascot.js').MascotSession;

/** Most triples or bits one preprocessing call may ask for (the binding's limit). */
const MAX_PREPROCESS = 10_000_000;
/** Largest preprocessing batch (the Rust `MAX_BATCH`). */
const MAX_BATCH = 4096;

/** The options `Session.run` takes for `mascot`. */
export interface MascotRoleOptions {
  /** The field the program must be over (a check: the program says which it is). */
  field?: FieldName;
  /** @internal The clients' masked inputs of a program with client inputs (`serve` gives them). */
  clients?: MascotClientInputs;
}

/**
 * @internal What `serve` (`ts/clients.ts`) hands a run of a program with client inputs: for each
 * client input in program order, the id of its first mask (u64 LE) then one masked value per
 * mask (16 LE bytes each: ε = x − a, see `webmpc_spdz::clients`); and the masks of clients that
 * were dropped, forgotten before the run.
 */
export interface MascotClientInputs {
  readonly bytes: Uint8Array;
  /** SHA-256 of `bytes` (hex): what the servers agree on (the bytes stay this party's own). */
  readonly digest: string;
  /** `[first mask id, count]` of each dropped client's masks. */
  readonly drop: readonly (readonly [number, number])[];
}

/** The client inputs' bytes ride beside the agreed roles under a symbol key (see localOptions). */
const CLIENT_BYTES: unique symbol = Symbol('webmpc.mascot.clients');

/** The roles the parties agree on. */
type MascotRoles = {
  readonly field?: FieldName;
  readonly clients?: { readonly digest: string; readonly drop: readonly (readonly [number, number])[] };
};
type WithClientBytes = MascotRoles & { readonly [CLIENT_BYTES]?: Uint8Array };

/** Most masks one `clientMasks` call may take (the binding's limit is the same). */
const MAX_CLIENT_MASKS = 1 << 20;

/** The options of `Session.preprocess('mascot', ...)`. */
export interface MascotPreprocessOptions {
  /** Triples to add to the store. */
  triples?: number;
  /** Random bits to add to the store (used by comparisons). */
  bits?: number;
  /** Instead of counts: make sure the store holds what one run of this program needs. */
  program?: Program;
  /** The field to preprocess for (default `'prime'`, or the program's). */
  field?: FieldName;
  /** Triples per batch from now on in this session (default 1024; at most 4096); memory vs rounds. */
  batch?: number;
  /**
   * @internal Takes this many triples as client input masks (`serve`): the preprocessing then
   * resolves, through the SDK's internal call, with `{ first, shares }` (this server's shares of
   * each triple for its client, 48 bytes per mask).
   */
  clientMasks?: number;
}

/** What the parties agree on before preprocessing. */
export type MascotPreprocessParams = {
  readonly field: FieldName;
  readonly triples: number;
  readonly bits: number;
  /** true: top up to `triples`/`bits` (a program's needs); false: add them. */
  readonly topUp: boolean;
  readonly batch: number | null;
  readonly clientMasks: number;
};

/**
 * The Wasm MASCOT parties of one session, one per field (opaque: typed structurally so the
 * published declarations do not pull in the generated bindings' types).
 */
export interface MascotState {
  readonly parties: Map<FieldName, { free(): void }>;
}

/** The types `mascot` is written over. */
export interface MascotTypes {
  readonly computes: 'program';
  readonly roleOptions: MascotRoleOptions;
  readonly roles: MascotRoles;
  readonly preprocessOptions: MascotPreprocessOptions;
  readonly preprocessParams: MascotPreprocessParams;
  readonly state: MascotState;
}

function invalid(message: string): WebmpcError {
  return new WebmpcError('INVALID_ARGUMENT', message);
}

function checkField(field: unknown): FieldName {
  if (field !== 'prime' && field !== 'binary') throw invalid("mascot: field must be 'prime' or 'binary'");
  return field;
}

function count(value: unknown, what: string): number {
  if (value === undefined) return 0;
  if (!Number.isInteger(value) || (value as number) < 0 || (value as number) > MAX_PREPROCESS) {
    throw invalid(`mascot: ${what} must be an integer in [0, ${MAX_PREPROCESS}]`);
  }
  return value as number;
}

function roles(options: MascotRoleOptions, _env: PartyEnv): MascotRoles {
  const field = options.field === undefined ? {} : { field: checkField(options.field) };
  const c = options.clients;
  if (c === undefined) return field;
  if (
    typeof c !== 'object' ||
    c === null ||
    !(c.bytes instanceof Uint8Array) ||
    typeof c.digest !== 'string' ||
    !/^[0-9a-f]{64}$/.test(c.digest) ||
    !Array.isArray(c.drop) ||
    !c.drop.every((d) => Array.isArray(d) && d.length === 2 && d.every((x) => Number.isSafeInteger(x) && x >= 0))
  ) {
    throw invalid('mascot: clients must be { bytes, digest, drop } as serve makes them');
  }
  const agreed: WithClientBytes = { ...field, clients: { digest: c.digest, drop: c.drop.map(([a, b]) => [a, b] as const) }, [CLIENT_BYTES]: c.bytes };
  return agreed;
}

function preprocessParams(options: MascotPreprocessOptions, env: PartyEnv): MascotPreprocessParams {
  let batch: number | null = null;
  if (options.batch !== undefined) {
    if (!Number.isInteger(options.batch) || options.batch < 1 || options.batch > MAX_BATCH) throw invalid(`mascot: batch must be an integer in [1, ${MAX_BATCH}]`);
    batch = options.batch;
  }
  if (options.program !== undefined) {
    const program = options.program;
    if (!isProgram(program)) throw invalid('mascot: program must come from webmpc/program (ProgramBuilder.build or programFromBytes)');
    if (options.triples !== undefined || options.bits !== undefined) throw invalid('mascot: give either a program or counts of triples and bits, not both');
    if (options.field !== undefined && checkField(options.field) !== program.field) throw invalid(`mascot: the program is over the ${program.field} field, not the ${options.field} one`);
    if (program.parties !== env.parties) throw invalid(`mascot: the program is for ${program.parties} parties; this session has ${env.parties}`);
    const need = program.requirements();
    if (options.clientMasks !== undefined) throw invalid('mascot: give either a program or clientMasks');
    return { field: program.field, triples: need.triples, bits: need.bits, topUp: true, batch, clientMasks: 0 };
  }
  const field = options.field === undefined ? 'prime' : checkField(options.field);
  const clientMasks = count(options.clientMasks, 'clientMasks');
  if (clientMasks > MAX_CLIENT_MASKS) throw invalid(`mascot: clientMasks must be at most ${MAX_CLIENT_MASKS}`);
  return { field, triples: count(options.triples, 'triples'), bits: count(options.bits, 'bits'), topUp: false, batch, clientMasks };
}

/** This party's MASCOT setup for `field`, running it (base OTs, COPE with every peer) on first use. */
async function party(ctx: ProtocolContext<MascotState>, field: FieldName): Promise<RawMascot> {
  const state = (ctx.state ??= { parties: new Map() });
  const have = state.parties.get(field);
  if (have) return have as RawMascot;
  ctx.progress('setup', 0, 1);
  const w = await loadModule('mascot');
  // Separate Δ, base OTs and tweaks per field: a session may use both.
  const sid = await sha256(ctx.sessionId, utf8(field));
  const raw = await ctx.call(() => w.mascotSetup(ctx.transport, field, sid) as Promise<RawMascot>);
  state.parties.set(field, raw);
  ctx.progress('setup', 1, 1);
  return raw;
}

function stored(raw: RawMascot): { triples: number; bits: number } {
  const s = raw.stored as { triples: number; bits: number } | undefined;
  if (!s) throw new WebmpcError('BUSY', 'mascot: this party is busy with another call');
  return s;
}

/**
 * Adds (or, with `topUp`, tops the store up to) `triples` triples and `bits` bits. Bits are made
 * from triples in the store, so they go first and the triples they used are replaced. With
 * parallel instances the new items are shared out: this party makes its part while each instance
 * makes its own (with this party's MAC key, see `Party::setup_with_delta` in the spdz crate), and
 * the instances' items join the store after this party's, in instance order, at every party.
 */
async function generate(
  ctx: ProtocolContext<MascotState>,
  raw: RawMascot,
  field: FieldName,
  triples: number,
  bits: number,
  topUp: boolean,
  batch: number | null = null,
): Promise<void> {
  const progress = (phase: string, done: number, total: number) => ctx.progress(phase, done, total);
  const before = stored(raw);
  const newBits = topUp ? Math.max(0, bits - before.bits) : bits;
  const k = (ctx.instances?.count ?? 0) + 1;
  // Item counts are shared out the same way at every party (the stores are in step).
  const part = (n: number, i: number) => Math.floor(n / k) + (i < n % k ? 1 : 0);
  const myBits = part(newBits, 0);
  // This party's bits use up its stored triples (one each); the new triples are what is missing
  // after that (top-up) or what was asked for (add).
  const newTriples = topUp ? Math.max(0, triples - Math.max(0, before.triples - myBits)) : triples;
  const theirTriples = Array.from({ length: k - 1 }, (_, i) => part(newTriples, i + 1));
  const mine = async () => {
    if (myBits > 0) await ctx.call(() => raw.preprocess(0, myBits, progress) as Promise<void>);
    const after = stored(raw);
    const brought = theirTriples.reduce((a, b) => a + b, 0);
    const myTriples = topUp
      ? Math.max(0, triples - brought - after.triples)
      : part(triples, 0) + (before.triples - after.triples); // (replacing what the bits used)
    if (myTriples > 0) await ctx.call(() => raw.preprocess(myTriples, 0, progress) as Promise<void>);
  };
  if (k === 1) return mine();
  const instances = ctx.instances!;
  const delta = raw.deltaForInstances() as Uint8Array;
  try {
    const args = Array.from({ length: k - 1 }, (_, i) => ({
      field,
      bits: part(newBits, i + 1),
      triples: theirTriples[i]!,
      batch,
      delta: delta.slice(),
    }));
    const [, made] = await Promise.all([mine(), instances.run('preprocess', args)]);
    for (const m of made as { bytes: Uint8Array; triples: number; bits: number }[]) {
      await ctx.call(async () => raw.putMaterial(m.bytes, m.triples, m.bits));
      m.bytes.fill(0);
    }
  } finally {
    delta.fill(0);
  }
}

/** A parallel instance's share of the preprocessing: its items, made under the party's MAC key. */
async function preprocessInstance(
  ictx: InstanceContext,
  args: unknown,
): Promise<{ bytes: Uint8Array; triples: number; bits: number }> {
  const { field, bits, triples, batch, delta } = args as {
    field: FieldName;
    bits: number;
    triples: number;
    batch: number | null;
    delta: Uint8Array;
  };
  try {
    const state = (ictx.state ??= { parties: new Map() }) as MascotState;
    let raw = state.parties.get(field) as RawMascot | undefined;
    if (!raw) {
      ictx.progress('setup', 0, 1);
      const w = await loadModule('mascot');
      const sid = await sha256(ictx.sessionId, utf8(field));
      raw = await ictx.call(() => w.mascotSetupInstance(ictx.transport, field, sid, delta) as Promise<RawMascot>);
      state.parties.set(field, raw);
      ictx.progress('setup', 1, 1);
    }
    const r = raw;
    if (batch !== null) await ictx.call(async () => r.setBatch(batch));
    const progress = (phase: string, done: number, total: number) => ictx.progress(phase, done, total);
    if (bits > 0) await ictx.call(() => r.preprocess(0, bits, progress) as Promise<void>);
    const left = stored(r).triples;
    if (triples > left) await ictx.call(() => r.preprocess(triples - left, 0, progress) as Promise<void>);
    return r.takeMaterial() as { bytes: Uint8Array; triples: number; bits: number };
  } finally {
    delta.fill(0);
  }
}

function check(job: ProgramJob<MascotRoles>, env: PartyEnv): void {
  const program = job.program;
  if (!isProgram(program)) throw invalid('mascot runs programs from webmpc/program (ProgramBuilder.build or programFromBytes)');
  if (program.parties !== env.parties) throw invalid(`mascot: the program is for ${program.parties} parties; this session has ${env.parties}`);
  const want = job.roles.field;
  if (want !== undefined && want !== program.field) throw invalid(`mascot: the program is over the ${program.field} field, not the ${want} one`);
  const clientInputs = (program as Program).clientInputs().length;
  if (clientInputs > 0 && job.roles.clients === undefined) throw invalid('mascot: the program has client inputs: compute parties run it through serve()');
  if (clientInputs === 0 && job.roles.clients !== undefined) throw invalid('mascot: clients given, but the program has no client inputs');
}

async function run(ctx: ProtocolContext<MascotState>, job: ProgramJob<MascotRoles>): Promise<Outputs> {
  const program = job.program as Program; // check() refused anything else
  const inputs = wireInputs(program, ctx.party, job.inputs);
  const raw = await party(ctx, program.field);
  const clients = job.roles.clients;
  // Masks of dropped clients are forgotten first (local: every server drops the same, agreed).
  for (const [first, n] of clients?.drop ?? []) await ctx.call(async () => raw.dropClientMasks(first, n));
  const need = program.requirements();
  await generate(ctx, raw, program.field, need.triples, need.bits, true);
  const progress = (_phase: string, done: number, total: number) => ctx.progress('evaluating', done, total);
  const bytes = (job.roles as WithClientBytes)[CLIENT_BYTES];
  if (clients && !bytes) throw invalid('mascot: the client inputs did not reach the engine');
  if (bytes) {
    // (`serve` reads this shape; only it can run a program with client inputs.)
    const r = (await ctx.call(() => raw.runWithClients(program.bytes, inputs, bytes, progress))) as { outputs: (Uint8Array | undefined)[]; refused: number[] };
    return { outputs: bigEndian(r.outputs), refused: r.refused } as unknown as Outputs;
  }
  return bigEndian(await ctx.call(() => raw.run(program.bytes, inputs, progress) as Promise<(Uint8Array | undefined)[]>));
}

/** The binding speaks little-endian; sessions speak big-endian. */
function bigEndian(outputs: (Uint8Array | undefined)[]): (Uint8Array | undefined)[] {
  return outputs.map((v) => (v ? v.slice().reverse() : undefined));
}

/** The `mascot` protocol module. */
export const mascot: ProtocolModule<MascotTypes> = {
  name: 'mascot',
  version: 1,
  security: 'malicious (abort)',
  protects:
    'Inputs stay private and outputs correct against any n − 1 corrupt parties, who can only force an abort ' +
    '(no fairness: one may abort after seeing its own output), and aborts may be selective (one honest party ' +
    'aborts while another gets its correct outputs). Integer inputs are range-checked bit by bit; ' +
    'field-element inputs are not, and comparisons on them rely on a width the program promises.',
  computes: 'program',
  parties: { min: 2, max: 1024 },
  wasmModule: 'mascot',
  roleOptions: ['field', 'clients'],
  roles,
  // The client inputs go to the engine worker beside the agreed roles (only their digest is agreed).
  localOptions: bytesBesideRoles(CLIENT_BYTES),
  check,
  run,
  preprocess: {
    options: ['triples', 'bits', 'program', 'field', 'batch', 'clientMasks'],
    params: preprocessParams,
    async run(ctx, params) {
      const raw = await party(ctx, params.field);
      if (params.batch !== null) {
        const batch = params.batch;
        await ctx.call(async () => raw.setBatch(batch));
      }
      await generate(ctx, raw, params.field, params.triples, params.bits, params.topUp, params.batch);
      if (params.clientMasks > 0) {
        const n = params.clientMasks;
        return ctx.call(() => raw.clientMasks(n) as Promise<{ first: number; shares: Uint8Array }>);
      }
      return undefined;
    },
  },
  free(state: MascotState): void {
    for (const raw of state.parties.values()) raw.free();
    state.parties.clear();
  },
  instanceTasks: { preprocess: preprocessInstance },
  freeInstance(state: unknown): void {
    mascot.free!(state as MascotState);
  },
};
