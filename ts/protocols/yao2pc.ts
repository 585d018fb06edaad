/**
 * `yao2pc`: Yao's garbled circuits between two parties (half-gates garbling, free XOR), the Rust
 * `webmpc_garble::yao` driver over the session's transport.
 *
 * One party (`garbler`, default 0) garbles the circuit and sends the tables with the labels of
 * its own inputs; the other evaluates, getting the labels of its inputs by OT extension (KOS,
 * seeded by 128 base OTs once per session and garbler: the setup, which `Session.preprocess`
 * can run ahead of time). The evaluator sends back the output bits meant for the garbler.
 *
 * What it protects against: **semi-honest** parties only. Each party's inputs stay private as
 * long as both follow the protocol. It does not protect against a party that deviates: the
 * garbled tables are not checked, so a cheating garbler can garble a different function (one
 * that reveals the evaluator's input, or that fails depending on it); and the garbler cannot
 * check what the evaluator reports, so a cheating evaluator can choose the garbler's outputs.
 * Use a malicious-secure protocol where either is a concern.
 *
 * Independent runs in parallel (`Session.runMany` with more than one agreed thread, in worker
 * mode): the runs are cut into contiguous chunks, the same cut at every party, and parallel
 * instance i runs chunk i in an engine worker of its own, over sub-channel i of the transport,
 * exactly as the primary runs chunk 0: with a Yao setup of its own (`webmpc_garble::yao`: its
 * own 128 base OTs and OT extension, a Δ drawn fresh at that setup, a label PRG seeded from
 * fresh entropy in its own Wasm instance), made under the instance's session id
 * (`instanceSessionId(protocol id, i)`, then per garbler as below), from which each run's hash
 * tweak tag is derived with the run's number. So no two instances share a key (Δ, OT seeds), a
 * label seed or a tweak, and nothing of one instance's runs is used by another's. The instances'
 * setups are kept in their workers for the session's later calls.
 */
import { PreparedCircuit, preparedHandle, type StreamedCircuit } from '../circuit/source.js';
import { wasm } from '../engine/wasm.js';
import { WebmpcError } from '../errors.js';
import type { CircuitJob, Outputs, PartyEnv, ProtocolContext, ProtocolModule } from './types.js';
import { sha256 } from './util.js';

type RawYao = import('../wasm-gen/webmpc.js').YaoSession;
type RawPrepared = import('../wasm-gen/webmpc.js').PreparedCircuit;

/** The garbling party of a `yao2pc` run. */
export interface YaoRoleOptions {
  /** The garbling party, 0 or 1 (default 0); the other evaluates. */
  garbler?: number;
}

/** The Yao setups of one session, one per garbler (opaque Wasm objects). */
export interface YaoState {
  readonly setups: Map<number, { free(): void }>;
}

/** The types `yao2pc` is written over. */
export interface YaoTypes {
  readonly computes: 'circuit';
  readonly roleOptions: YaoRoleOptions;
  readonly roles: { readonly garbler: number };
  readonly preprocessOptions: YaoRoleOptions;
  readonly preprocessParams: { readonly garbler: number };
  readonly state: YaoState;
}

function garblerOf(options: YaoRoleOptions): { garbler: number } {
  const garbler = options.garbler ?? 0;
  if (garbler !== 0 && garbler !== 1) throw new WebmpcError('INVALID_ARGUMENT', 'garbler must be 0 or 1');
  return { garbler };
}

/** This party's Yao setup for `garbler`, running it (base OTs with the peer) on first use. */
async function setup(ctx: ProtocolContext<YaoState>, garbler: number): Promise<RawYao> {
  const state = (ctx.state ??= { setups: new Map() });
  const have = state.setups.get(garbler);
  if (have) return have as RawYao;
  ctx.progress('setup', 0, 1);
  // A separate setup (base OTs, tweaks) per garbler, so a session can swap roles.
  const sid = await sha256(ctx.sessionId, Uint8Array.of(garbler));
  const role = ctx.party === garbler ? 'garbler' : 'evaluator';
  const raw = await ctx.call(() => wasm().yaoSetup(ctx.transport, role, 1 - ctx.party, sid) as Promise<RawYao>);
  state.setups.set(garbler, raw);
  ctx.progress('setup', 1, 1);
  return raw;
}

async function run(ctx: ProtocolContext<YaoState>, job: CircuitJob<{ readonly garbler: number }>): Promise<Outputs> {
  const { garbler } = job.roles;
  // The Wasm side speaks of roles: 0 garbler, 1 evaluator; outputs 0/1 to one of them, 2 to both.
  const ownerBytes = Uint8Array.from(job.owners, (p) => (p === garbler ? 0 : 1));
  const outputBytes = Uint8Array.from(job.outputs, (ps) => {
    const g = ps.includes(garbler);
    const e = ps.includes(1 - garbler);
    return g && e ? 2 : g ? 0 : 1;
  });
  const yao = await setup(ctx, garbler);
  const progress = (done: number, total: number) => ctx.progress('evaluating', done, total);
  const inputs = [...job.inputs];
  const { circuit } = job;
  if (circuit instanceof PreparedCircuit) {
    const handle = preparedHandle(circuit) as RawPrepared;
    return ctx.call(() => yao.run(handle, ownerBytes, outputBytes, inputs, progress) as Promise<Outputs>);
  }
  const pull = pieces(circuit);
  return ctx.call(
    () => yao.runStream(circuit.prefix, circuit.hash, pull, ownerBytes, outputBytes, inputs, progress) as Promise<Outputs>,
  );
}

/** The stream's pieces, pulled by Rust one at a time so only the pieces in flight are in memory. */
export function pieces(circuit: StreamedCircuit): () => Promise<Uint8Array | null> {
  const iterable = circuit.pieces();
  const it =
    Symbol.asyncIterator in iterable
      ? (iterable as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]()
      : (iterable as Iterable<Uint8Array>)[Symbol.iterator]();
  return async () => {
    const r = await it.next();
    return r.done ? null : r.value;
  };
}

/** The `yao2pc` protocol module. */
export const yao2pc: ProtocolModule<YaoTypes> = {
  name: 'yao2pc',
  version: 1,
  security: 'semi-honest',
  protects:
    'Inputs stay private against a party that follows the protocol. Not against one that deviates: ' +
    'garbled tables are not checked (a cheating garbler can garble another function of the ' +
    "evaluator's input), and a cheating evaluator can choose the garbler's outputs.",
  computes: 'circuit',
  parties: { min: 2, max: 2 },
  roleOptions: ['garbler'],
  roles: (options: YaoRoleOptions, _env: PartyEnv) => garblerOf(options),
  run,
  // Runs share nothing but the setup, which is keyed by the context's session id (see above).
  parallelRuns: true,
  preprocess: {
    options: ['garbler'],
    params: (options: YaoRoleOptions, _env: PartyEnv) => garblerOf(options),
    run: async (ctx, params) => void (await setup(ctx, params.garbler)),
  },
  free(state: YaoState): void {
    for (const raw of state.setups.values()) raw.free();
    state.setups.clear();
  },
};
