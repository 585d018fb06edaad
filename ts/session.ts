/**
 * Sessions: the SDK's entry point for running a computation among the parties of a Transport.
 *
 * ```ts
 * await using s = await webmpc.session({ transport, party, parties: 2 });
 * const out = await s.run(circuit, { inputs: [myValue], protocol: 'yao2pc' });
 * // out[i]: output value i as big-endian bytes, or undefined if it is not revealed to us
 * ```
 *
 * Conventions (those of Bristol Fashion and `../shared/circuits/README.md`): input value `i` of
 * the circuit (0-based) belongs to party `owners[i]`; each value is passed as big-endian bytes,
 * `ceil(width / 8)` of them. Output value `i` is revealed to the parties in `outputs[i]`
 * (default: everyone) and to nobody else. The owners come from the circuit when it declares them
 * (`CircuitBuilder.input(party, width)` does; an explicit `owners` that contradicts them is
 * refused), else from `owners`, else input i belongs to party i.
 *
 * Protocols (`protocol`, default `yao2pc`; one module each in `./protocols/`):
 * - `yao2pc` (2 parties, Boolean circuits): Yao's garbled circuits (half-gates); party `garbler`
 *   (default 0) garbles, the other evaluates, OT extension transfers the evaluator's input
 *   labels. Set up once per session and garbler (128 base OTs; `preprocess('yao2pc')` runs it
 *   ahead of time). **Semi-honest**: private only against parties that follow the protocol. The
 *   garbled tables are not checked, so a cheating garbler can garble another function of the
 *   evaluator's input; a cheating evaluator can choose the garbler's outputs.
 * - `plain` (2+ parties, Boolean circuits): **no privacy at all** — every party sends its inputs
 *   in the clear and evaluates the circuit itself. For debugging and as a reference; never for
 *   real secrets.
 *
 * `runMany(circuit, { inputs: [run0, run1, ...] })` runs one circuit (or program) many times
 * independently in one call (1 to {@link MAX_RUNS} runs; the count is agreed like the rest), and
 * resolves to each run's outputs in run order. `yao2pc` and `teleport-yao` in worker mode with
 * `threads` k > 1 run k contiguous chunks of them in parallel, each in an engine worker of its
 * own with a setup of its own; every other protocol, and both on one thread, run them one after
 * another.
 *
 * Before any protocol message, the parties exchange and compare their public parameters
 * (protocol and version, party count, roles such as the garbler, the circuit's content hash,
 * owners and outputs); any difference rejects every party's run with `PARAMETER_MISMATCH`
 * naming the field, and leaves the session usable. This party's inputs are checked before that
 * exchange, so a bad argument is an `INVALID_ARGUMENT` before anything is sent.
 *
 * Any other failure of `run` or `preprocess` (a bad argument, a cancelled `signal`, a cheating or
 * vanished peer) ends the session: its transport is closed with the error, so every peer's run
 * rejects at once (`PEER_DISCONNECTED` or the cause) instead of waiting for a timeout, and no
 * timer or socket is left to keep the process alive. Open a new session to continue.
 */
import { hex } from './bytes.js';
import {
  PreparedCircuit,
  isStreamedCircuit,
  prepareCircuit,
  streamedShape,
  unpreparedForm,
  type CircuitSource,
  type StreamedCircuit,
} from './circuit/source.js';
import { ProtocolAbort, TransportError, WebmpcError, fromWasmError } from './errors.js';
import type { Transport } from './net/transport.js';
import { agree, isSharedVerdict, type Offers, type ParameterRecord } from './protocols/agreement.js';
import { splitTransport } from './net/mux.js';
import { protocolModule, protocols, runsInWorker, type PreprocessOptionsOf, type Protocol, type RoleOptionsOf } from './protocols/index.js';
import type { CircuitJob, Json, Outputs, Params, Phase, ProgramJob, ProgramSource, ProtocolContext, ProtocolModule } from './protocols/types.js';
import { instanceSessionId, plural, sha256, utf8 } from './protocols/util.js';
import { runEach } from './protocols/runs.js';
import { compileModule } from './engine/modules.js';
import { compiledModule, isNode } from './engine/wasm.js';
import { trace } from './trace.js';
import { EngineWorker, takeEngineWorker, type OperationHooks } from './engine/worker-host.js';
import type { ContextInit, PreparedShape, WireCircuit, WireJob, WorkerOp } from './engine/worker-protocol.js';
import { TrafficLog, type Traffic } from './traffic.js';

export type { Protocol } from './protocols/index.js';
export type { Phase, ProgramSource, SecurityModel } from './protocols/types.js';
export type { Traffic, TrafficCounts } from './traffic.js';

declare global {
  interface SymbolConstructor {
    /** The `await using` hook (Node 20+, recent browsers; the TypeScript lib `esnext.disposable`). */
    readonly asyncDispose: unique symbol;
  }
}

/** `Symbol.asyncDispose`, or a registered stand-in where the runtime has none. */
const asyncDispose: typeof Symbol.asyncDispose = (Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose')) as typeof Symbol.asyncDispose;

export interface SessionOptions {
  transport: Transport;
  /** This party's index; must equal `transport.party`. */
  party: number;
  /** Number of parties; must equal `transport.parties`. */
  parties: number;
  /**
   * 32 bytes all parties agree on. If omitted, the parties agree on a fresh one by exchanging
   * random contributions over the transport.
   */
  sessionId?: Uint8Array;
  /**
   * Where the session's cryptography runs. `true` (the default): in an engine worker of its own
   * (a module Web Worker in browsers, `worker_threads` in Node), so this thread stays free to
   * paint, take input and answer its transports' heartbeats while protocols compute; the
   * transport stays here and the bytes move to the worker by transfer. `false`: on this thread,
   * for environments without workers (the parties need not choose alike). A protocol module an
   * app adds to the registry at run time always runs on this thread (the worker has only the
   * package's own).
   */
  worker?: boolean;
  /**
   * How many threads (engine workers) this party offers for a protocol's function-independent
   * work (OT extension, triple batches): the parties use the smallest offer, and a protocol that
   * can split its work runs that many independent instances in parallel, each in a worker of its
   * own over a sub-channel of the transport. Default: this machine's cores − 1, at most 8, at
   * least 1; 1 disables. Only in worker mode (an in-thread session offers 1).
   */
  threads?: number;
}

/** Most threads a session offers by default. */
const MAX_DEFAULT_THREADS = 8;

/** This machine's cores − 1, at most {@link MAX_DEFAULT_THREADS}, at least 1. */
export async function defaultThreads(): Promise<number> {
  let cores: number | undefined;
  if (isNode()) {
    // Hidden from bundlers, like the SDK's other `node:` imports.
    const specifier = 'node:os';
    const os = (await import(/* webpackIgnore: true */ /* @vite-ignore */ specifier)) as typeof import('node:os');
    cores = os.availableParallelism();
  } else {
    const nav = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator;
    cores = typeof nav?.hardwareConcurrency === 'number' ? nav.hardwareConcurrency : undefined;
  }
  return Math.max(1, Math.min(MAX_DEFAULT_THREADS, (cores ?? 2) - 1));
}

/** Progress of a run or preprocessing, as given to `onProgress`. */
export interface Progress {
  /** The stage: `'setup'` (e.g. base OTs), `'preprocessing'`, `'evaluating'`, ... */
  phase: Phase;
  /** Work done in this phase, out of `total` (units are the phase's own: gates, triples, ...). */
  done: number;
  total: number;
  /**
   * Circuit protocols: gates evaluated so far in this run, out of `gatesTotal` (0 until evaluation
   * starts); in `runMany`, over all its runs (parallel chunks added up).
   */
  gatesDone: number;
  gatesTotal: number;
  /** Bytes this party has sent in this run (or preprocessing) so far. */
  bytesSent: number;
}

/** Options every operation takes. */
export interface CommonOptions {
  /** Cancels the operation; the session's transport is closed, so the peers' runs reject too. */
  signal?: AbortSignal;
  /** Called as the operation progresses; a callback that throws is ignored. */
  onProgress?: (p: Progress) => void;
}

/** The options of `Session.run` common to every protocol. */
export interface BaseRunOptions extends CommonOptions {
  /** This party's own input values, in circuit (or program) order, as big-endian bytes. */
  inputs: readonly Uint8Array[];
  /**
   * The party supplying each input value. Default: what the circuit declares, else input i ↦
   * party i. Must agree with what the circuit (or program) declares.
   */
  owners?: readonly number[];
  /** The parties learning each output value (default: all parties); each list non-empty. */
  outputs?: readonly (readonly number[])[];
}

/**
 * The options of `Session.run` for protocol `P`: the common ones, `protocol`, and the roles `P`
 * takes (`yao2pc`: `garbler`).
 */
export type RunOptions<P extends Protocol = Protocol> = BaseRunOptions & { protocol?: P } & RoleOptionsOf<P>;

/**
 * The options of `Session.runMany` for protocol `P`: those of `run`, except that `inputs` holds
 * one list per run (this party's own input values of run r, as `run` takes them).
 */
export type RunManyOptions<P extends Protocol = Protocol> = Omit<BaseRunOptions, 'inputs'> & {
  inputs: readonly (readonly Uint8Array[])[];
} & { protocol?: P } & RoleOptionsOf<P>;

/** Most runs one `runMany` call takes. */
export const MAX_RUNS = 4096;

/** The options of `Session.preprocess` for protocol `P` (`yao2pc`: `garbler`). */
export type PreprocessOptions<P extends Protocol = Protocol> = CommonOptions & PreprocessOptionsOf<P>;

/** What `Session.run` computes: a Boolean circuit in any form, or a program. */
export type Computable = CircuitSource | PreparedCircuit | StreamedCircuit | ProgramSource;

const RUN_OPTIONS: ReadonlySet<string> = new Set(['inputs', 'owners', 'outputs', 'protocol', 'signal', 'onProgress']);
const COMMON_OPTIONS: ReadonlySet<string> = new Set(['signal', 'onProgress']);

function invalid(message: string): WebmpcError {
  return new WebmpcError('INVALID_ARGUMENT', message);
}

function isProgramSource(x: unknown): x is ProgramSource {
  return typeof x === 'object' && x !== null && (x as { kind?: unknown }).kind === 'program';
}

/** A computation session among the parties of one transport. */
export class Session {
  /** What the protocols talk through: the transport, counting the bytes this party sends. */
  readonly #counted: Transport;
  #bytesSent = 0;
  /** Rounds, bytes and messages by phase (see `./traffic.ts`). */
  readonly #traffic: TrafficLog;
  #busy = false;
  /** Settles when the operation in progress does (never rejects). */
  #current: Promise<unknown> = Promise.resolve();
  #closing: Promise<void> | undefined;
  /** The last circuit source run and its prepared form: repeated runs skip decoding and hashing. */
  #lastCircuit: { source: CircuitSource | PreparedCircuit; prepared: PreparedCircuit } | undefined;
  /** Each protocol's per-session state (e.g. the Yao setup), by protocol name (in-thread mode). */
  readonly #states = new Map<string, unknown>();
  /** Whether operations run in an engine worker. */
  readonly #inWorker: boolean;
  /** The threads this party offers (1 in-thread). */
  readonly #threads: number;
  /** Engine workers of parallel instances, by instance index − 1 (kept across operations). */
  readonly #instanceWorkers: Promise<EngineWorker>[] = [];
  /** The worker stops not yet finished (see {@link #stopEngine}). */
  readonly #stopping = new Set<Promise<void>>();
  /** The engine worker, once an operation started it (it holds the protocol state then). */
  #engine: Promise<EngineWorker> | undefined;

  /** @internal */
  constructor(
    readonly transport: Transport,
    readonly party: number,
    readonly parties: number,
    readonly sessionId: Uint8Array,
    worker = true,
    threads = 1,
    traffic = new TrafficLog(),
  ) {
    this.#traffic = traffic;
    this.#inWorker = worker;
    this.#threads = worker ? threads : 1;
    const t = transport;
    this.#counted = traffic.meter({
      party: t.party,
      parties: t.parties,
      closed: t.closed,
      send: (to, data, owned) => {
        this.#bytesSent += data.length;
        return t.send(to, data, owned);
      },
      recv: (from, options) => t.recv(from, options),
      close: (reason) => t.close(reason),
    });
  }

  /** Bytes this party has sent through the session so far (all runs; not the session-id exchange). */
  get bytesSent(): number {
    return this.#bytesSent;
  }

  /**
   * Rounds, bytes and messages this party has sent and received through the session so far, per
   * phase and in total: the session-id exchange, and every operation's parameter agreement and
   * protocol phases. A snapshot: read it again for later figures. How rounds are counted, and
   * what they bound, is in `traffic.ts`: in short, exactly the critical path in one-way flights
   * for two parties in lockstep, an upper bound for two parties otherwise.
   */
  get traffic(): Traffic {
    return this.#traffic.snapshot();
  }

  /** {@link traffic} of the operation in progress, or of the last one (or the session-id exchange before any). */
  get lastTraffic(): Traffic {
    return this.#traffic.lastOperation();
  }

  /**
   * Runs `circuit` (or a program) with `options.protocol` (default `yao2pc`); resolves to one
   * entry per output value (undefined where not revealed to this party). Every party calls it
   * with the same circuit, protocol, roles and assignment, each with its own inputs.
   */
  run<P extends Protocol = 'yao2pc'>(circuit: Computable, options: RunOptions<P>): Promise<Outputs> {
    return this.#exclusive(options?.signal, () => this.#run(circuit, options as RunOptions));
  }

  /**
   * Runs `circuit` (or a program) `options.inputs.length` times, independently, with this party's
   * inputs of run r in `options.inputs[r]` (1 to {@link MAX_RUNS} runs); resolves to each run's
   * outputs, in run order. Every party calls it with the same circuit, protocol, roles,
   * assignment and number of runs (a different count is `PARAMETER_MISMATCH` at every party).
   *
   * `yao2pc` and `teleport-yao` in worker mode with more than one agreed thread (k; teleport-yao
   * at most 4, each instance holding an enclave-server session): the runs are cut into k
   * contiguous chunks, the same at every party; the primary runs chunk 0 in its engine worker and
   * parallel instance i runs chunk i in a worker of its own over sub-channel i of the transport,
   * with a setup of its own under its own session id. Every other protocol, `teleport-yao` with
   * an evaluator's own WebSocket class (it exists on this thread only), and both with one thread
   * or on this thread, run them one after another (the setup made once). A failure of
   * any run fails the call (and the session) with that run's error. Not for a `StreamedCircuit`
   * (each run reads the circuit again): prepare it.
   */
  runMany<P extends Protocol = 'yao2pc'>(circuit: Computable, options: RunManyOptions<P>): Promise<Outputs[]> {
    return this.#exclusive(options?.signal, () => this.#runMany(circuit, options as RunManyOptions));
  }

  /**
   * Runs `protocol`'s input-independent preprocessing now (every party calls it with the same
   * options), so later runs are faster: `yao2pc` sets up the base OTs for `garbler`. Refused with
   * `INVALID_ARGUMENT` by protocols that have none.
   */
  preprocess<P extends Protocol>(protocol: P, options?: PreprocessOptions<P>): Promise<void> {
    const opts = (options ?? {}) as PreprocessOptions;
    return this.#exclusive(opts.signal, async () => void (await this.#preprocess(protocol, opts)));
  }

  /**
   * @internal `preprocess`, resolving with what the protocol's preprocessing returns (`mascot`'s
   * `clientMasks`: this server's shares of the client masks, for `serve`).
   */
  _preprocessWithResult<P extends Protocol>(protocol: P, options: PreprocessOptions<P>): Promise<unknown> {
    return this.#exclusive(options.signal, () => this.#preprocess(protocol, options as PreprocessOptions));
  }

  /**
   * Ends the session: waits for (after cancelling) any computation in progress, frees the
   * Wasm-side state, and closes the transport gracefully. Idempotent. A Node process whose
   * sessions are closed has nothing of the session's left to keep it alive.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#busy) {
        void this.transport.close(new TransportError('CLOSED', 'the session was closed during a computation'));
        await this.#current;
      }
      this.free();
      await this.#stopEngine();
      await this.transport.close();
    })();
    return this.#closing;
  }

  /**
   * @internal Starts the engine worker now (worker mode), so its start-up (loading the SDK and
   * instantiating the Wasm there) overlaps what the caller does before the first run. A failure
   * shows at the first operation, which tries again.
   */
  warmUp(): void {
    if (!this.#inWorker || this.#engine || !compiledModule('main')) return;
    void this.#startEngine().catch(() => {});
  }

  /**
   * Resolves once the session can compute without further start-up: its engine worker is running
   * (worker mode; `session()` starts it at once), or at once on this thread. Rejects with
   * `WORKER_FAILED` if the worker cannot start. Optional: operations wait for it themselves.
   */
  async ready(): Promise<void> {
    if (this.#inWorker) await this.#startEngine();
  }

  /** @internal Tests: the engine worker, if one was started. */
  get _engine(): Promise<EngineWorker> | undefined {
    return this.#engine;
  }

  /** Whether this session's operations run in an engine worker (see {@link SessionOptions.worker}). */
  get inWorker(): boolean {
    return this.#inWorker;
  }

  /** `await using s = await session(...)`: {@link close} at the end of the scope. */
  [asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * Releases Wasm-side state (protocol setups, the cached circuit) but leaves the transport open;
   * the next run sets up again, so every party must free at the same point. Prefer {@link close}.
   */
  free(): void {
    if (this.#busy) throw new WebmpcError('BUSY', 'a computation is running; close() the session to stop it');
    for (const [name, state] of this.#states) {
      if (state !== undefined) protocolModule(name)?.free?.(state);
    }
    this.#states.clear();
    // The worker holds the protocol state in worker mode: ending it releases all of it.
    void this.#stopEngine();
    if (this.#lastCircuit && this.#lastCircuit.prepared !== this.#lastCircuit.source) this.#lastCircuit.prepared.free();
    this.#lastCircuit = undefined;
  }

  /**
   * Runs one operation at a time. On failure, closes the transport with the error (so the peers
   * stop waiting for us), except for a parameter mismatch, which every party sees by itself.
   */
  async #exclusive<T>(signal: AbortSignal | undefined, body: () => Promise<T>): Promise<T> {
    if (this.#busy) throw new WebmpcError('BUSY', 'this session is already running a computation');
    if (this.#closing) throw new TransportError('CLOSED', 'this session is closed');
    this.#busy = true;
    const onAbort = () => {
      void this.transport.close(new TransportError('ABORTED', 'the computation was cancelled'));
    };
    const task = (async () => {
      try {
        if (signal?.aborted) throw signal.reason;
        signal?.addEventListener('abort', onAbort, { once: true });
        return await body();
      } catch (err) {
        let e = fromWasmError(err);
        if (signal?.aborted) e = new TransportError('ABORTED', 'the computation was cancelled', { cause: err });
        if (!isSharedVerdict(e)) {
          const reason = e instanceof Error ? e : new WebmpcError('INVALID_ARGUMENT', 'the computation failed', { cause: e });
          await this.transport.close(reason);
        }
        throw e;
      } finally {
        signal?.removeEventListener('abort', onAbort);
        this.#traffic.end();
        this.#busy = false;
      }
    })();
    this.#current = task.catch(() => {});
    return task;
  }

  async #run(target: Computable, options: RunOptions): Promise<Outputs> {
    if (typeof options !== 'object' || options === null) throw invalid('run needs an options object with the inputs');
    const { module, inWorker, job } = await this.#settle(target, options, 'run');
    const { ctx, threads } = await this.#agree(module, job, options, inWorker, [['operation', 'run']], false);
    if (!inWorker) return module.run(ctx, job);
    const streamed = job.kind === 'circuit' && !(job.circuit instanceof PreparedCircuit) ? job.circuit : undefined;
    const wire = this.#wireJob(job);
    const local = module.localOptions?.send(job.roles);
    return (await this.#remote(module, ctx, threads, (init) => ({ op: 'run', protocol: module.name, ctx: init, job: wire, local }), streamed)) as Outputs;
  }

  async #runMany(target: Computable, options: RunManyOptions): Promise<Outputs[]> {
    if (typeof options !== 'object' || options === null) throw invalid('runMany needs an options object with the inputs of each run');
    const runs = options.inputs;
    if (!Array.isArray(runs) || runs.length < 1 || runs.length > MAX_RUNS) {
      throw invalid(`runMany needs inputs as an array of 1 to ${MAX_RUNS} runs (each this party's input values of that run)`);
    }
    this._runManyInstanceIds = [];
    if (isStreamedCircuit(target)) {
      throw invalid('runMany reads the circuit once per run: pass it prepared (or as bytes or text), not as a StreamedCircuit');
    }
    // Each run's inputs are checked as run checks them, before anything is sent; the message
    // names the run.
    const each = (r: number) => ({ ...options, inputs: runs[r] as readonly Uint8Array[] });
    const { module, inWorker, job, source } = await this.#settle(target, each(0), 'runMany', 0);
    const inputs = runs.map((_, r) => (r === 0 ? job.inputs : this.#named(r, () => this.#jobOf(module, source, each(r), job.roles).inputs)));
    const parallel = module.parallelRuns === true;
    const { ctx, threads } = await this.#agree(module, job, options, inWorker, [['operation', 'runMany'], ['runs', runs.length]], parallel);
    if (!inWorker) return runEach(module.run, ctx, job, inputs);
    const wire = this.#wireJob({ ...job, inputs: [] });
    const local = module.localOptions?.send(job.roles);
    // With k threads, k contiguous chunks (fewer if there are fewer runs): the same cut at every
    // party, since the count and the threads are agreed.
    const k = Math.min(threads, runs.length, module.maxParallelRuns ?? Infinity);
    const chunks = Array.from({ length: k }, (_, i) => inputs.slice(Math.floor((i * runs.length) / k), Math.floor(((i + 1) * runs.length) / k)));
    const op = (init: ContextInit, chunk: readonly (readonly Uint8Array[])[]): WorkerOp => ({ op: 'run-many', protocol: module.name, ctx: init, job: wire, runs: chunk, local });
    if (k <= 1) return (await this.#remote(module, ctx, 1, (init) => op(init, inputs))) as Outputs[];
    const engine = await this.#engineUnlessClosed();
    const modules = await this.#modulesFor(module);
    const workers = this.#instancePool(k - 1);
    workers.catch(() => {});
    const split = this.#split(ctx, k);
    const ids: Uint8Array[] = [];
    const results = await Promise.all(
      chunks.map(async (chunk, i) => {
        const hooks: OperationHooks = { transport: split.channel(i), progress: split.source(i) };
        if (i === 0) return engine.perform(op(this.#contextInit(ctx), chunk), hooks, modules);
        // Instance i: a protocol context of its own (its own setup, hence keys, label seeds and
        // tweaks) under its own session id, in its own worker, over sub-channel i.
        const sessionId = await instanceSessionId(ctx.sessionId, i);
        ids[i - 1] = sessionId;
        const worker = (await workers)[i - 1]!;
        return worker.perform(op({ party: this.party, parties: this.parties, sessionId }, chunk), hooks, modules);
      }),
    );
    this._runManyInstanceIds = ids;
    await split.close();
    return (results as Outputs[][]).flat();
  }

  /** @internal Tests: the session ids the parallel instances of the last split `runMany` used. */
  _runManyInstanceIds: readonly Uint8Array[] = [];

  /** `f()`, with an `INVALID_ARGUMENT` it throws naming run `r`. */
  #named<T>(r: number, f: () => T): T {
    try {
      return f();
    } catch (err) {
      if (err instanceof WebmpcError && err.code === 'INVALID_ARGUMENT') throw invalid(`run ${r}: ${err.message}`);
      throw err;
    }
  }

  /**
   * What `run` and `runMany` settle before anything is sent: the module, its roles, where it
   * runs (in worker mode a circuit is decoded, validated and hashed in the worker, as on this
   * thread: this thread only learns its shape and hash), and the checked job.
   */
  async #settle(target: Computable, options: RunOptions, op: string, run?: number) {
    const name = options.protocol ?? 'yao2pc';
    const module = this.#module(name);
    checkOptionNames(options, RUN_OPTIONS, module, module.roleOptions, op);
    const env = { party: this.party, parties: this.parties };
    const roles = module.roles(options, env);
    const inWorker = this.#inWorker && runsInWorker(module.name) && !(await module.localOptions?.bindToCallerThread?.(roles, env));
    const source = inWorker && module.computes === 'circuit' ? await this.#prepareInWorker(target) : target;
    const make = () => this.#jobOf(module, source, options, roles);
    const job = run === undefined ? make() : this.#named(run, make);
    // A circuit's client inputs (owner −1) come only through serve, with authgc's client stages.
    if (job.kind === 'circuit' && job.owners.includes(-1) && module.name !== 'authgc') {
      throw invalid(`protocol '${module.name}' takes no client inputs: a circuit with client inputs runs through serve() with authgc`);
    }
    module.check?.(job, env);
    return { module, inWorker, job, source };
  }

  #jobOf(module: ProtocolModule, source: Computable, options: BaseRunOptions, roles: Params): CircuitJob<Params> | ProgramJob<Params> {
    return module.computes === 'circuit' ? this.#circuitJob(source, options, roles) : this.#programJob(source, options, roles);
  }

  /**
   * Agrees with the peers on the run's public parameters (`head` first: the operation and what is
   * its own), every argument being checked; only now does anything go on the network. Resolves
   * with the protocol context and the agreed threads (1 when nothing is split).
   */
  async #agree(
    module: ProtocolModule,
    job: CircuitJob<Params> | ProgramJob<Params>,
    options: CommonOptions,
    inWorker: boolean,
    head: ParameterRecord,
    parallelRuns: boolean,
  ): Promise<{ ctx: ProtocolContext<unknown>; threads: number }> {
    const record: ParameterRecord = [
      ...head,
      ['protocol', module.name],
      ['version', module.version],
      ['parties', this.parties],
      ['kind', job.kind],
      ['roles', job.roles],
      ['hash', hex(job.hash)],
      ['owners', [...job.owners]],
      ['outputs', job.outputs.map((o) => [...o])],
    ];
    const ctx = await this.#context(module, options);
    this.#traffic.begin('agreement');
    trace(`party ${this.party}`, 'agreeing', { protocol: module.name });
    const { threads } = await agree(this.#counted, this.party, this.parties, record, this.#offers(module, inWorker, parallelRuns));
    trace(`party ${this.party}`, 'agreed', { threads });
    this.#traffic.operation(head[0]![1] as string);
    return { ctx, threads: threads ?? 1 };
  }

  /** What this party offers for `module`'s operation: threads, if the protocol can use them. */
  #offers(module: ProtocolModule, inWorker: boolean, parallelRuns = false): Offers {
    return inWorker && (module.instanceTasks || parallelRuns) ? { threads: this.#threads } : {};
  }

  /**
   * Runs an operation in the engine worker. With more than one agreed thread, the transport is
   * split into sub-channels for it: the primary (the module) on channel 0, parallel instance i on
   * channel i, each instance in its own worker; the split is closed with the operation.
   */
  async #remote(
    module: ProtocolModule,
    ctx: ProtocolContext<unknown>,
    threads: number,
    op: (init: ContextInit) => WorkerOp,
    streamed?: StreamedCircuit,
  ): Promise<unknown> {
    const engine = await this.#engineUnlessClosed();
    const modules = await this.#modulesFor(module);
    if (threads <= 1) return engine.perform(op(this.#contextInit(ctx)), this.#hooks(ctx, streamed), modules);
    // The instances' workers start now, while the primary does what it does first (its setup).
    void this.#instancePool(threads - 1).catch(() => {});
    const { channel, source, close } = this.#split(ctx, threads);
    const primary: OperationHooks = { ...this.#hooks(ctx, streamed), transport: channel(0), progress: source(0) };
    const instances = async (task: string, args: readonly unknown[]): Promise<unknown[]> => {
      const workers = await this.#instancePool(threads - 1);
      return Promise.all(
        args.map(async (a, i) => {
          const index = i + 1;
          const sessionId = await instanceSessionId(ctx.sessionId, index);
          const init = { party: this.party, parties: this.parties, sessionId, index };
          const hooks: OperationHooks = { transport: channel(index), progress: source(index) };
          return workers[i]!.perform({ op: 'instance', protocol: module.name, task, ctx: init, args: a }, hooks, modules);
        }),
      );
    };
    const value = await engine.perform(op({ ...this.#contextInit(ctx), instances: threads - 1 }), { ...primary, instances }, modules);
    await close();
    return value;
  }

  /**
   * The transport split into `threads` sub-channels for one operation: channel i's transport
   * (its traffic counted apart, in the phase its own source last reported) and progress source
   * (the sources' figures added up per phase); `close` ends the split.
   */
  #split(ctx: ProtocolContext<unknown>, threads: number) {
    this.#traffic.split(threads);
    const mux = splitTransport(ctx.transport, { channels: threads });
    const sum = new ProgressSum((phase, done, total) => ctx.progress(phase, done, total));
    return {
      channel: (index: number) => this.#traffic.meter(mux.channels[index]!, index),
      source: (index: number) => {
        const report = sum.source(index);
        return (phase: string, done: number, total: number) => {
          this.#traffic.enter(phase, index, done);
          report(phase, done, total);
        };
      },
      close: async () => {
        await mux.close();
        this.#traffic.split(0);
      },
    };
  }

  /** The engine workers of the first `count` parallel instances, started on first use and kept. */
  async #instancePool(count: number): Promise<EngineWorker[]> {
    const main = compiledModule('main');
    if (!main) throw new WebmpcError('NOT_INITIALIZED', 'webmpc: call and await init() before running a session');
    while (this.#instanceWorkers.length < count) {
      const w = EngineWorker.start({ main });
      w.catch(() => {});
      this.#instanceWorkers.push(w);
    }
    return Promise.all(this.#instanceWorkers.slice(0, count));
  }

  async #preprocess(name: Protocol, options: PreprocessOptions): Promise<unknown> {
    const module = this.#module(name);
    const hook = module.preprocess;
    if (!hook) throw invalid(`protocol '${module.name}' has no preprocessing`);
    checkOptionNames(options, COMMON_OPTIONS, module, hook.options, 'preprocess');
    const params = hook.params(options, { party: this.party, parties: this.parties });
    const record: ParameterRecord = [
      ['operation', 'preprocess'],
      ['protocol', module.name],
      ['version', module.version],
      ['parties', this.parties],
      ['params', params as Params as Json],
    ];
    const ctx = await this.#context(module, options);
    const inWorker = this.#inWorker && runsInWorker(module.name) && !(await module.localOptions?.bindToCallerThread?.(params, { party: this.party, parties: this.parties }));
    this.#traffic.begin('agreement');
    const { threads } = await agree(this.#counted, this.party, this.parties, record, this.#offers(module, inWorker));
    this.#traffic.operation('preprocess');
    if (!inWorker) return hook.run(ctx, params);
    const local = module.localOptions?.send(params);
    return this.#remote(module, ctx, threads ?? 1, (init) => ({ op: 'preprocess', protocol: module.name, ctx: init, params, local }));
  }

  /** The engine worker, started on first use with the main Wasm module this realm compiled. */
  #startEngine(): Promise<EngineWorker> {
    if (!this.#engine) {
      const main = compiledModule('main');
      if (!main) throw new WebmpcError('NOT_INITIALIZED', 'webmpc: call and await init() before running a session');
      trace(`party ${this.party}`, 'engine worker starting');
      this.#engine = takeEngineWorker(main);
      void this.#engine.then(() => trace(`party ${this.party}`, 'engine worker ready'), () => {});
      // A worker that failed to start is not kept: the session fails (its transport closes) and
      // a later session starts afresh.
      this.#engine.catch(() => (this.#engine = undefined));
    }
    return this.#engine;
  }

  /**
   * The engine worker, or the transport's failure if it closes first: a peer that aborts while
   * the worker is still starting must not wait for it.
   */
  async #engineUnlessClosed(): Promise<EngineWorker> {
    let stop: (() => void) | undefined;
    const closed = new Promise<never>((_, reject) => {
      stop = () => reject(new TransportError('CLOSED', 'the session ended before its engine worker started'));
      void this.transport.closed.then((reason) => reject(reason instanceof WebmpcError ? reason : new TransportError('CLOSED', "the session's transport closed")));
    });
    closed.catch(() => {});
    try {
      return await Promise.race([this.#startEngine(), closed]);
    } finally {
      stop?.();
    }
  }

  /**
   * Ends the engine worker and the instances' workers, if any were started, releasing their
   * memory. Resolves once every worker any call so far took away is ended: `free()` does not wait,
   * and `close()` after it must not find the list empty and return while a worker that was still
   * starting (a loaded machine) has yet to be ended.
   */
  #stopEngine(): Promise<void> {
    const engines = [...(this.#engine ? [this.#engine] : []), ...this.#instanceWorkers.splice(0)];
    this.#engine = undefined;
    const stop: Promise<void> = Promise.all(
      engines.map((engine) =>
        engine.then(
          (e) => e.terminate(),
          () => {},
        ),
      ),
    )
      .then(() => {})
      .finally(() => this.#stopping.delete(stop));
    this.#stopping.add(stop);
    return Promise.all([...this.#stopping]).then(() => {});
  }

  /** The module a protocol needs besides the main one, compiled here once, for the worker. */
  async #modulesFor(module: ProtocolModule): Promise<{ [name: string]: WebAssembly.Module } | undefined> {
    const name = module.wasmModule;
    return name === undefined ? undefined : { [name]: await compileModule(name) };
  }

  #contextInit(ctx: ProtocolContext<unknown>): { party: number; parties: number; sessionId: Uint8Array } {
    return { party: ctx.party, parties: ctx.parties, sessionId: ctx.sessionId };
  }

  /** What the worker's operation needs on this side: the counted transport, progress, circuit pieces. */
  #hooks(ctx: ProtocolContext<unknown>, streamed?: StreamedCircuit): OperationHooks {
    let pieces: AsyncIterator<Uint8Array> | Iterator<Uint8Array> | undefined;
    const open = (c: StreamedCircuit): AsyncIterator<Uint8Array> | Iterator<Uint8Array> => {
      const source = c.pieces();
      return Symbol.asyncIterator in source
        ? (source as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]()
        : (source as Iterable<Uint8Array>)[Symbol.iterator]();
    };
    return {
      transport: ctx.transport,
      progress: (phase, done, total) => ctx.progress(phase, done, total),
      ...(streamed
        ? {
            pull: async () => {
              pieces ??= open(streamed);
              const next = await pieces.next();
              return next.done ? null : next.value;
            },
          }
        : {}),
    };
  }

  /**
   * `target` prepared by the engine worker when it is a circuit source this thread has not
   * prepared (bytes, Bristol text, a builder circuit); anything else as it is.
   */
  async #prepareInWorker(target: Computable): Promise<Computable> {
    if (isProgramSource(target) || isStreamedCircuit(target) || target instanceof PreparedCircuit) return target;
    if (this.#lastCircuit?.source === target) return this.#lastCircuit.prepared;
    const form = unpreparedForm(target);
    // Not raced against the transport: preparing sends nothing, and a circuit this party refuses
    // is its own error to report even when a peer, refusing it first, has already hung up.
    const engine = await this.#startEngine();
    const shape = (await engine.perform({ op: 'prepare', source: form }, { transport: this.#counted, progress: () => {} })) as PreparedShape;
    const binary = 'binary' in form ? form.binary : shape.binary!;
    const prepared = new PreparedCircuit(binary, 'bristol' in form ? undefined : form.owners, shape);
    if (this.#lastCircuit && this.#lastCircuit.prepared !== this.#lastCircuit.source) this.#lastCircuit.prepared.free();
    this.#lastCircuit = { source: target, prepared };
    return prepared;
  }

  /** A job as it crosses to the worker (a prepared circuit as its binary form). */
  #wireJob(job: CircuitJob<Params> | ProgramJob<Params>): WireJob {
    const common = { hash: job.hash, owners: job.owners, outputs: job.outputs, inputs: job.inputs, roles: job.roles };
    if (job.kind === 'program') {
      const bytes = (job.program as ProgramSource & { bytes?: unknown }).bytes;
      if (!(bytes instanceof Uint8Array)) throw invalid('this program cannot be sent to the engine worker (it has no encoding)');
      return { kind: 'program', program: bytes, ...common };
    }
    const c = job.circuit;
    let circuit: WireCircuit;
    if (c instanceof PreparedCircuit) {
      circuit = { type: 'prepared', hash: c.hash, binary: c.binary, owners: c.owners };
    } else {
      circuit = { type: 'streamed', prefix: c.prefix, hash: c.hash, owners: c.owners };
    }
    return { kind: 'circuit', circuit, shape: job.shape, ...common };
  }

  #module(name: unknown): ProtocolModule {
    const module = protocolModule(name);
    if (!module) {
      const known = Object.keys(protocols).join(', ');
      throw invalid(`unknown protocol ${typeof name === 'string' ? `'${name.slice(0, 40)}'` : String(name)} (known: ${known})`);
    }
    const { min, max } = module.parties;
    if (this.parties < min || this.parties > max) {
      const allowed = min === max ? `exactly ${min}` : `${min} to ${max}`;
      throw invalid(`${module.name} runs between ${allowed} parties; this session has ${this.parties}`);
    }
    return module;
  }

  /** The context a module runs in: counted transport, derived session id, progress, state. */
  async #context(module: ProtocolModule, options: CommonOptions): Promise<ProtocolContext<unknown>> {
    const sessionId = await sha256(utf8(`webmpc/protocol/${module.name}/v${module.version}`), this.sessionId);
    const sentBefore = this.#bytesSent;
    const { onProgress, signal } = options;
    let gatesDone = 0;
    let gatesTotal = 0;
    const states = this.#states;
    return {
      transport: this.#counted,
      party: this.party,
      parties: this.parties,
      sessionId,
      signal,
      progress: (phase, done, total) => {
        // The primary's phase; while the transport is split, each source reports its own.
        this.#traffic.enter(phase, undefined, done);
        if (phase === 'evaluating' && module.computes === 'circuit') {
          gatesDone = done;
          gatesTotal = total;
        }
        try {
          onProgress?.({ phase, done, total, gatesDone, gatesTotal, bytesSent: this.#bytesSent - sentBefore });
        } catch {
          // A throwing progress callback must not abort the protocol.
        }
      },
      call: (f) => this.#call(f),
      // Parallel instances exist only in the engine worker (see #remote).
      instances: undefined,
      get state() {
        return states.get(module.name);
      },
      set state(value) {
        states.set(module.name, value);
      },
    };
  }

  /** Awaits a Wasm call; maps its errors, and on a protocol verdict closes the transport at once. */
  async #call<T>(f: () => Promise<T>): Promise<T> {
    try {
      return await f();
    } catch (err) {
      const e = fromWasmError(err);
      if (e instanceof ProtocolAbort) await this.transport.close(e);
      throw e;
    }
  }

  #prepare(source: CircuitSource | PreparedCircuit): PreparedCircuit {
    // The caller's own prepared circuit (or one the engine worker prepared): used as it is.
    if (source instanceof PreparedCircuit) return source;
    if (this.#lastCircuit?.source === source) return this.#lastCircuit.prepared;
    const prepared = prepareCircuit(source);
    if (this.#lastCircuit && this.#lastCircuit.prepared !== this.#lastCircuit.source) this.#lastCircuit.prepared.free();
    this.#lastCircuit = { source, prepared };
    return prepared;
  }

  #circuitJob<R extends Params>(target: Computable, options: BaseRunOptions, roles: R): CircuitJob<R> {
    if (isProgramSource(target)) throw invalid(`protocol '${protocolName(options)}' runs Boolean circuits, not programs`);
    const circuit = isStreamedCircuit(target) ? target : this.#prepare(target);
    let shape: CircuitJob<R>['shape'];
    let declared: readonly number[] | undefined;
    if (circuit instanceof PreparedCircuit) {
      if (circuit.isFreed) throw invalid('this PreparedCircuit was freed');
      shape = circuit;
      declared = circuit.owners;
    } else {
      if (!(circuit.hash instanceof Uint8Array) || circuit.hash.length !== 32) throw invalid('a streamed circuit needs its 32-byte hash');
      shape = streamedShape(circuit);
      declared = circuit.owners;
    }
    const nIn = shape.inputWidths.length;
    const owners = this.#owners(nIn, declared, options.owners, 'circuit');
    const outputs = this.#outputs(shape.outputWidths.length, undefined, options.outputs, 'circuit');
    const inputs = this.#inputs(owners, options.inputs, 'circuit', (i, v) => {
      const w = shape.inputWidths[i]!;
      const bytes = Math.ceil(w / 8);
      return v.length === bytes ? undefined : `is ${plural(w, 'bit')} wide: it needs ${plural(bytes, 'byte')}, not ${v.length}`;
    });
    return { kind: 'circuit', circuit, shape, hash: circuit.hash, owners, outputs, inputs, roles };
  }

  #programJob<R extends Params>(target: Computable, options: BaseRunOptions, roles: R): ProgramJob<R> {
    if (!isProgramSource(target)) throw invalid(`protocol '${protocolName(options)}' runs programs, not Boolean circuits`);
    const program = target;
    if (!(program.hash instanceof Uint8Array) || program.hash.length !== 32) throw invalid('a program needs its 32-byte hash');
    const owners = this.#owners(program.owners.length, program.owners, options.owners, 'program');
    const outputs = this.#outputs(program.outputs.length, program.outputs, options.outputs, 'program');
    const inputs = this.#inputs(owners, options.inputs, 'program', (i, v) => program.checkInput(i, v));
    return { kind: 'program', program, hash: program.hash, owners, outputs, inputs, roles };
  }

  /** The owner of each input: declared by the circuit, given, or input i ↦ party i. */
  #owners(n: number, declared: readonly number[] | undefined, given: readonly number[] | undefined, what: string): readonly number[] {
    if (given !== undefined && !Array.isArray(given)) throw invalid('owners must be an array of party indices');
    const owners = given ?? declared ?? Array.from({ length: n }, (_, i) => i);
    // −1: an external client's input, which only a program can declare (`serve` supplies it).
    if (owners.length !== n || !owners.every((p, k) => this.#isParty(p) || (p === -1 && declared?.[k] === -1))) {
      throw invalid(`owners must name a party in [0, ${this.parties}) for each of the ${plural(n, 'input value')} of the ${what}`);
    }
    if (declared && given) {
      const i = given.findIndex((p, k) => p !== declared[k]);
      if (i >= 0) {
        throw invalid(`owners contradict the ${what}: its input value ${i} belongs to party ${declared[i]}, not ${given[i]}`);
      }
    }
    return owners;
  }

  /** The recipients of each output: declared by the program, given, or every party. */
  #outputs(
    n: number,
    declared: readonly (readonly number[])[] | undefined,
    given: readonly (readonly number[])[] | undefined,
    what: string,
  ): readonly (readonly number[])[] {
    const all = [...Array(this.parties).keys()];
    const outputs = given ?? declared ?? Array.from({ length: n }, () => all);
    if (!Array.isArray(outputs) || outputs.length !== n || !outputs.every((o) => Array.isArray(o) && o.every((p) => this.#isParty(p)))) {
      throw invalid(`outputs must list parties in [0, ${this.parties}) for each of the ${plural(n, 'output value')} of the ${what}`);
    }
    const nobody = outputs.findIndex((o) => o.length === 0);
    if (nobody >= 0) throw invalid(`every output value must be revealed to at least one party (output value ${nobody} is not)`);
    if (declared && given) {
      const same = (a: readonly number[], b: readonly number[]) => a.length === b.length && [...a].sort().join() === [...b].sort().join();
      const i = given.findIndex((o, k) => !same(o, declared[k]!));
      if (i >= 0) throw invalid(`outputs contradict the ${what}: output value ${i} goes to parties ${declared[i]!.join(', ')}`);
    }
    return outputs;
  }

  /**
   * This party's input values against what it owns, before anything goes on the network.
   * Messages name the circuit's input index and sizes, never the values.
   */
  #inputs(
    owners: readonly number[],
    inputs: readonly Uint8Array[] | undefined,
    what: string,
    problem: (index: number, value: Uint8Array) => string | undefined,
  ): readonly Uint8Array[] {
    const mine = owners.flatMap((p, i) => (p === this.party ? [i] : []));
    if (!Array.isArray(inputs) || inputs.length !== mine.length) {
      const which = mine.length === 0 ? '' : ` (${mine.length === 1 ? 'input' : 'inputs'} ${listIndices(mine)})`;
      const got = Array.isArray(inputs) ? inputs.length : 'none';
      throw invalid(`party ${this.party} owns ${plural(mine.length, 'input value')} of the ${what}${which}; ${got} given`);
    }
    mine.forEach((i, k) => {
      const v = inputs[k];
      if (!(v instanceof Uint8Array)) throw invalid(`the value for ${what} input ${i} (inputs[${k}]) must be a Uint8Array`);
      const p = problem(i, v);
      if (p !== undefined) throw invalid(`the value for ${what} input ${i} (inputs[${k}]) ${p}`);
    });
    return [...inputs];
  }

  #isParty(p: unknown): boolean {
    return Number.isInteger(p) && (p as number) >= 0 && (p as number) < this.parties;
  }
}

function protocolName(options: object): string {
  return String((options as { protocol?: unknown }).protocol ?? 'yao2pc');
}

/** `0, 2, 5` (the first ten, then `...`). */
function listIndices(indices: readonly number[]): string {
  return indices.length > 10 ? `${indices.slice(0, 10).join(', ')}, ...` : indices.join(', ');
}

/** Refuses options the protocol does not take (a misspelt or misplaced role is a silent bug). */
function checkOptionNames(options: object, common: ReadonlySet<string>, module: ProtocolModule, own: readonly string[], op: string): void {
  for (const key of Object.keys(options)) {
    if (common.has(key) || own.includes(key) || (options as Record<string, unknown>)[key] === undefined) continue;
    throw invalid(`option '${key.slice(0, 40)}' does not apply to ${op} with protocol '${module.name}'`);
  }
}

/**
 * Opens a session; agrees on a session id with the other parties unless one is given. On failure
 * the transport is closed with the error, so the other parties do not wait for this one.
 */
export async function session(options: SessionOptions): Promise<Session> {
  const { transport, party, parties } = options;
  try {
    if (transport.party !== party || transport.parties !== parties) {
      throw invalid('party/parties must match the transport');
    }
    let sid = options.sessionId;
    const traffic = new TrafficLog();
    if (sid !== undefined && !(sid instanceof Uint8Array && sid.length === 32)) {
      throw invalid('sessionId must be 32 bytes');
    }
    if (sid === undefined) {
      // Each party contributes 32 random bytes; the id hashes all contributions in party order, so
      // it is fresh as long as one party is honest.
      traffic.begin('session-id');
      const t = traffic.meter(transport);
      const mine = crypto.getRandomValues(new Uint8Array(32));
      const peers = [...Array(parties).keys()].filter((p) => p !== party);
      const all: Uint8Array[] = new Array(parties);
      all[party] = mine;
      await Promise.all([
        ...peers.map((p) => t.send(p, mine)),
        (async () => {
          for (const p of peers) {
            const c = await t.recv(p);
            if (c.length !== 32) throw new ProtocolAbort('MALFORMED_MESSAGE', `party ${p} sent a malformed session contribution`, { peer: p });
            all[p] = c;
          }
        })(),
      ]);
      sid = await sha256(utf8('webmpc/session-id/v1'), ...all);
      traffic.end();
    }
    if (options.worker !== undefined && typeof options.worker !== 'boolean') throw invalid('worker must be true or false');
    const threads = options.threads ?? (await defaultThreads());
    if (!Number.isSafeInteger(threads) || threads < 1 || threads > 64) throw invalid('threads must be a whole number from 1 to 64');
    const s = new Session(transport, party, parties, sid, options.worker ?? true, threads, traffic);
    s.warmUp();
    return s;
  } catch (err) {
    await transport?.close?.(err instanceof Error ? err : undefined);
    throw err;
  }
}

/**
 * Progress of an operation split over parallel instances: per phase, the sum of what each source
 * (the primary, each instance) last reported.
 */
class ProgressSum {
  readonly #report: (phase: string, done: number, total: number) => void;
  readonly #last = new Map<string, Map<number, { done: number; total: number }>>();

  constructor(report: (phase: string, done: number, total: number) => void) {
    this.#report = report;
  }

  source(index: number): (phase: string, done: number, total: number) => void {
    return (phase, done, total) => {
      let byPhase = this.#last.get(phase);
      if (!byPhase) this.#last.set(phase, (byPhase = new Map()));
      byPhase.set(index, { done, total });
      let d = 0;
      let t = 0;
      for (const v of byPhase.values()) {
        d += v.done;
        t += v.total;
      }
      this.#report(phase, d, t);
    };
  }
}
