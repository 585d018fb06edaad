/**
 * The contract between `Session` and a protocol module (`ts/protocols/<name>.ts`).
 *
 * The session does everything that is the same for every protocol: it prepares the circuit or
 * program, settles who owns each input and who learns each output, checks this party's inputs,
 * agrees with the other parties on a {@link ParameterRecord} (so a mismatch is a typed
 * `PARAMETER_MISMATCH` before any protocol message), counts bytes, maps errors, and closes the
 * transport on any failure so no peer is left waiting. A module does only what is its own: it
 * checks and normalises its role options ({@link ProtocolModule.roles}), refuses jobs it cannot
 * run ({@link ProtocolModule.check}), and runs ({@link ProtocolModule.run}) or preprocesses
 * ({@link ProtocolModule.preprocess}) through the {@link ProtocolContext} it is handed.
 *
 * Adding a protocol: write `ts/protocols/<name>.ts` exporting a `ProtocolModule`, and add it to
 * the registry in `./index.ts`. Nothing else changes: `Session.run`'s option types follow from
 * the module's {@link ProtocolTypes}.
 */
import type { PreparedCircuit, StreamedCircuit } from '../circuit/source.js';
import type { Transport } from '../net/transport.js';

/** What a protocol protects against, for documentation and for apps that show it. */
export type SecurityModel =
  /** No privacy at all (`plain`): every party sees every input. */
  | 'none'
  /** Private against parties that follow the protocol; a party that deviates breaks it. */
  | 'semi-honest'
  /** Private and correct against any number of deviating parties, who can only force an abort. */
  | 'malicious (abort)';

/**
 * What a protocol computes on. `'circuit'`: Boolean circuits (`CircuitSource`,
 * `PreparedCircuit`, `StreamedCircuit`). `'program'`: arithmetic programs ({@link ProgramSource}).
 */
export type ComputesOn = 'circuit' | 'program';

/**
 * A stage of a run or preprocessing, as reported to `onProgress`. The named ones are shared;
 * a protocol may report a phase of its own.
 */
export type Phase = 'setup' | 'preprocessing' | 'evaluating' | 'output' | (string & {});

/** A JSON value: what goes into the parameter record the parties compare. */
export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };

/** Named public parameters (roles, preprocessing sizes): compared between parties as JSON. */
export type Params = { readonly [key: string]: Json };

/** Output values: big-endian bytes, or `undefined` where not revealed to this party. */
export type Outputs = (Uint8Array | undefined)[];

/**
 * An arithmetic program, as a `'program'` protocol takes it (the format itself belongs to that
 * protocol). The session needs only this much to check arguments and agree with the peers.
 * Input and output values are big-endian bytes, as for circuits.
 */
export interface ProgramSource {
  readonly kind: 'program';
  /** 32-byte content hash of the program's encoding: what the parties compare. */
  readonly hash: Uint8Array;
  /** The party supplying each input value, in program order. */
  readonly owners: readonly number[];
  /** The parties learning each output value, in program order. */
  readonly outputs: readonly (readonly number[])[];
  /**
   * Checks `value` for input `index`; returns what is wrong (sizes, never the value), or
   * `undefined` if it is acceptable.
   */
  checkInput(index: number, value: Uint8Array): string | undefined;
}

/** This party's place among the parties. */
export interface PartyEnv {
  /** This party's index. */
  readonly party: number;
  /** Number of parties. */
  readonly parties: number;
}

/** What a module's `run` and `preprocess` get from the session. */
export interface ProtocolContext<State> extends PartyEnv {
  /** The session's transport; bytes sent through it are counted into the session's totals. */
  readonly transport: Transport;
  /**
   * 32 bytes, the same at every party, different for every protocol (and protocol version):
   * SHA-256 of `webmpc/protocol/<name>/v<version>` and the session id.
   */
  readonly sessionId: Uint8Array;
  /** The caller's cancellation signal. The session closes the transport when it fires. */
  readonly signal: AbortSignal | undefined;
  /** Reports progress of `phase` to the caller's `onProgress` (never throws). */
  progress(phase: Phase, done: number, total: number): void;
  /**
   * Awaits a call into Wasm: maps what it throws onto the SDK's typed errors, and on a protocol
   * verdict (cheating detected, malformed message) closes the transport at once, so every peer
   * aborts too. Wrap every Wasm call that talks to peers in it.
   */
  call<T>(f: () => Promise<T>): Promise<T>;
  /**
   * This protocol's state in this session, kept across runs (e.g. a Yao setup, leftover
   * triples); `undefined` until the module sets it. Released by {@link ProtocolModule.free}.
   */
  state: State | undefined;
  /**
   * The parallel instances of this operation, when the parties agreed on more than one thread
   * and the protocol has {@link ProtocolModule.instanceTasks}; `undefined` otherwise (then the
   * module does all the work itself).
   */
  readonly instances: Instances | undefined;
}

/**
 * Independent instances of a protocol's function-independent work (OT extension, triple
 * batches), each in an engine worker of its own with its own Wasm instance, talking to instance i
 * of every other party over sub-channel i of the session's transport (`ts/net/mux.ts`), while the
 * module itself (the primary) uses sub-channel 0. Each has its own session id, derived from the
 * protocol's, and its own state, kept across the session's operations; so instances never share
 * a tweak, a nonce or an OT, and whatever key material they share (a party's MAC key Δ) is handed
 * to them explicitly by the primary.
 */
export interface Instances {
  /** How many instances there are besides the primary (the agreed threads − 1). */
  readonly count: number;
  /**
   * Runs the module's instance task `task` in every instance at once, instance i with `args[i]`
   * (`args.length` must be {@link count}); resolves with their results, in order, or rejects
   * with the first failure (which aborts the session at every party). Arguments and results are
   * structured-cloned; their buffers are transferred where they are wholly owned.
   */
  run(task: string, args: readonly unknown[]): Promise<unknown[]>;
}

/** What an instance task gets: a protocol context for instance `index` (1-based; 0 is the primary). */
export interface InstanceContext<State = unknown> extends PartyEnv {
  /** Sub-channel `index` of the session's transport. */
  readonly transport: Transport;
  /** SHA-256 of the protocol's session id and `instance/<index>`: the same at every party. */
  readonly sessionId: Uint8Array;
  readonly index: number;
  /** Reports this instance's progress; the session adds up the instances' figures per phase. */
  progress(phase: Phase, done: number, total: number): void;
  /** As {@link ProtocolContext.call}. */
  call<T>(f: () => Promise<T>): Promise<T>;
  /** This instance's state, kept in its worker across the session's operations. */
  state: State | undefined;
}

/** Settled before a module sees it: the same for every protocol that computes on circuits. */
export interface CircuitJob<Roles extends Params> {
  readonly kind: 'circuit';
  readonly circuit: PreparedCircuit | StreamedCircuit;
  /** Widths of the input and output values, and the gate count. */
  readonly shape: { readonly inputWidths: readonly number[]; readonly outputWidths: readonly number[]; readonly gates: number };
  /** Content hash (32 bytes) the parties agreed on. */
  readonly hash: Uint8Array;
  /** `owners[i]`: the party supplying input value i. */
  readonly owners: readonly number[];
  /** `outputs[i]`: the parties learning output value i (never empty). */
  readonly outputs: readonly (readonly number[])[];
  /** This party's own input values, in circuit order, checked against their widths. */
  readonly inputs: readonly Uint8Array[];
  /** The roles from {@link ProtocolModule.roles}, agreed by every party. */
  readonly roles: Roles;
}

/** Like {@link CircuitJob}, for a program. */
export interface ProgramJob<Roles extends Params> {
  readonly kind: 'program';
  readonly program: ProgramSource;
  readonly hash: Uint8Array;
  readonly owners: readonly number[];
  readonly outputs: readonly (readonly number[])[];
  readonly inputs: readonly Uint8Array[];
  readonly roles: Roles;
}

/** The job a module computing on `K` receives. */
export type JobFor<K extends ComputesOn, Roles extends Params> = K extends 'circuit' ? CircuitJob<Roles> : ProgramJob<Roles>;

/** The types one protocol module is written over. */
export interface ProtocolTypes {
  readonly computes: ComputesOn;
  /** The options of `Session.run` this protocol adds (e.g. `{ garbler?: number }`). */
  readonly roleOptions: object;
  /** Those options checked and normalised: what the parties agree on. */
  readonly roles: Params;
  /** The options of `Session.preprocess` for this protocol (`{}` if it has none). */
  readonly preprocessOptions: object;
  /** Those options checked and normalised: what the parties agree on. */
  readonly preprocessParams: Params;
  /** What it keeps per session across runs. */
  readonly state: unknown;
}

/** Input-independent preprocessing a protocol offers (`Session.preprocess`). */
export interface PreprocessHook<T extends ProtocolTypes> {
  /** The option names it accepts (for refusing misspelt ones at run time). */
  readonly options: readonly (keyof T['preprocessOptions'] & string)[];
  /** Checks and normalises the options, before anything is sent. Throws `INVALID_ARGUMENT`. */
  params(options: T['preprocessOptions'], env: PartyEnv): T['preprocessParams'];
  /**
   * Runs the preprocessing (after the parties agreed on `params`), keeping its result in
   * `ctx.state`; may resolve with something for the caller (structured-clonable), which
   * `Session.preprocess` drops and the SDK's own callers read.
   */
  run(ctx: ProtocolContext<T['state']>, params: T['preprocessParams']): Promise<unknown>;
}

/** What every protocol module exports. */
export interface ProtocolModule<T extends ProtocolTypes = ProtocolTypes> {
  /** The name `Session.run` takes in `protocol` (and the registry key). */
  readonly name: string;
  /** Bumped whenever the protocol's messages change; parties must run the same version. */
  readonly version: number;
  readonly security: SecurityModel;
  /** One or two sentences: what the protocol protects against, and what it does not. */
  readonly protects: string;
  readonly computes: T['computes'];
  /** The numbers of parties it runs with (inclusive). */
  readonly parties: { readonly min: number; readonly max: number };
  /**
   * The Wasm module it loads besides the main one (`ts/engine/modules.ts`), if any: the session
   * compiles it once on its own thread and hands it to the engine worker.
   */
  readonly wasmModule?: import('../engine/types.js').ProtocolModuleName;
  /**
   * `false` for a protocol that runs on the session's own thread even in worker mode (none of
   * the package's protocols; a module an app adds at run time always does).
   */
  readonly worker?: false;
  /**
   * For roles or preprocessing parameters that carry options of this party's own beside what the
   * parties agree on (teleport-yao's enclave options, under a symbol key that a structured clone
   * would drop): `send` turns them into plain data for the engine worker, `receive` (in the
   * worker) puts them back, supplying there what cannot cross (a WebSocket constructor).
   */
  readonly localOptions?: {
    send(rolesOrParams: object): unknown;
    receive(rolesOrParams: object, local: unknown): Promise<object>;
    /**
     * True when these options hold something of this thread's that the worker cannot make
     * itself (an app's own WebSocket class): then the operation runs on the caller's thread.
     */
    bindToCallerThread?(rolesOrParams: object, env: PartyEnv): Promise<boolean>;
  };
  /** The option names of `Session.run` it accepts beyond the common ones. */
  readonly roleOptions: readonly (keyof T['roleOptions'] & string)[];
  /** Checks and normalises the role options, before anything is sent. Throws `INVALID_ARGUMENT`. */
  roles(options: T['roleOptions'], env: PartyEnv): T['roles'];
  /** Refuses (with `INVALID_ARGUMENT`) a job it cannot run, before anything is sent. */
  check?(job: JobFor<T['computes'], T['roles']>, env: PartyEnv): void;
  /** Runs the job; resolves to one entry per output value. */
  run(ctx: ProtocolContext<T['state']>, job: JobFor<T['computes'], T['roles']>): Promise<Outputs>;
  /** Input-independent preprocessing, if the protocol has any. */
  readonly preprocess?: PreprocessHook<T>;
  /** Releases the per-session state (Wasm objects) when the session is freed or closed. */
  free?(state: T['state']): void;
  /**
   * Work the module can hand to parallel instances ({@link ProtocolContext.instances}), by name.
   * A task runs in an instance's worker with that instance's context and the argument the
   * primary gave it, and resolves with a result for the primary (structured-clonable: bytes,
   * numbers, plain objects). Its state is released with `freeInstance`.
   */
  readonly instanceTasks?: { readonly [task: string]: (ctx: InstanceContext, args: unknown) => Promise<unknown> };
  /** Releases an instance's state. */
  freeInstance?(state: unknown): void;
  /**
   * `true` when independent runs of one job (`Session.runMany`) may go to parallel instances:
   * instance i runs its contiguous chunk of the runs in a worker of its own, over sub-channel i,
   * as a full protocol context of its own (its own state and setup) under the session id
   * {@link InstanceContext.sessionId} names. Only for a protocol whose runs share nothing but
   * that setup, and whose setup is keyed by the context's session id (so instances never share
   * a key, a seed or a tweak). Otherwise `runMany` runs them one after another on the primary.
   */
  readonly parallelRuns?: true;
  /**
   * The most parallel instances (the primary included) `runMany` gives this protocol, whatever
   * the threads agreed: for a protocol whose every instance holds a resource of its own outside
   * the SDK (teleport-yao: an enclave-server session, which the server limits per client).
   */
  readonly maxParallelRuns?: number;
}

/** The types a module was written over. */
export type TypesOf<M> = M extends ProtocolModule<infer T> ? T : never;
