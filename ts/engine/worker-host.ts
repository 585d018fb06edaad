/**
 * The caller's side of an engine worker (`worker.ts`): starts it (a module Web Worker in
 * browsers, `worker_threads` in Node), hands it the compiled Wasm, asks it to run protocol
 * operations, and moves the bytes of its `send`s and `recv`s over the session's transport, which
 * stays on this thread with its heartbeats.
 *
 * Failure: a worker that crashes, runs out of memory or stops answering fails the operation in
 * progress with `WORKER_FAILED` (and the session closes its transport with it, so the peers abort
 * too); it is never waited for without a deadline. {@link EngineWorker.terminate} ends it and
 * releases its memory.
 */
import { TransportError, WebmpcError } from '../errors.js';
import type { Transport } from '../net/transport.js';
import { isNode } from './wasm.js';
import { trace } from '../trace.js';
import { SlicedRelay } from './relay.js';
import {
  fromWire,
  toWire,
  transferOf,
  workerFailed,
  type HostMessage,
  type WorkerMessage,
  type WorkerOp,
} from './worker-protocol.js';

/** How long a worker may take to load its Wasm and say it is ready. */
const START_TIMEOUT_MS = 30_000;
/**
 * Once an operation's transport has closed gracefully, how long its worker may take to notice
 * (its next send or receive fails) before it is terminated: a worker in the middle of a long
 * computation would otherwise run on for nothing. (Closed with an error, the operation fails at
 * once: see `perform`.)
 */
const ABANDON_AFTER_MS = 2_000;
/**
 * Once a peer has closed an operation's transport (its abort, its death), how long the worker may
 * take to finish what it holds before it is terminated. Only a cap: a worker waiting for a
 * message learns of the close at once (its receive fails), and a computing one at its next send
 * or receive, so the operation ends as soon as the worker's current Wasm call does. What the cap
 * must not cut short is this party's own check of messages already here, which is what proves a
 * cheater's deviation when the cheater's check tripped first and it aborted: on a loaded machine
 * that call can take seconds, and cutting it turns this party's CHEATING_DETECTED into a bare
 * PEER_DISCONNECTED. (It was 500 ms: a race a slow machine could lose.)
 */
const PEER_CLOSE_GRACE_MS = 10_000;
/** Node: the most a worker's JS heap may grow to (its Wasm memory is counted apart). */
const NODE_HEAP_LIMIT_MB = 512;

/** A started worker, whatever the platform. */
interface PlatformWorker {
  post(message: HostMessage, transfer?: ArrayBuffer[]): void;
  /** Registers the handlers: messages, and the worker's death (crash, out of memory, exit). */
  listen(onMessage: (m: WorkerMessage) => void, onDeath: (error: WebmpcError) => void): void;
  /** Node: whether the worker keeps the process alive (only while it works for us). */
  keepAlive(on: boolean): void;
  terminate(): Promise<void>;
}

async function spawn(): Promise<PlatformWorker> {
  if (isNode()) {
    const specifier = 'node:worker_threads';
    const { Worker } = (await import(/* webpackIgnore: true */ /* @vite-ignore */ specifier)) as typeof import('node:worker_threads');
    const w = new Worker(new URL('./worker.js', import.meta.url), { resourceLimits: { maxOldGenerationSizeMb: NODE_HEAP_LIMIT_MB } });
    w.unref();
    return {
      post: (m, t) => w.postMessage(m, t ?? []),
      listen: (onMessage, onDeath) => {
        w.on('message', onMessage);
        w.on('error', (err: Error & { code?: string }) =>
          onDeath(
            workerFailed(
              err.code === 'ERR_WORKER_OUT_OF_MEMORY'
                ? 'the engine worker ran out of memory'
                : `the engine worker crashed (${err.name}${err.code ? ` ${err.code}` : ''})`,
              err,
            ),
          ),
        );
        w.on('exit', (code) => onDeath(workerFailed(`the engine worker exited (code ${code})`)));
      },
      keepAlive: (on) => (on ? w.ref() : w.unref()),
      terminate: async () => {
        await w.terminate();
      },
    };
  }
  const WorkerCtor = (globalThis as { Worker?: typeof Worker }).Worker;
  if (typeof WorkerCtor !== 'function') {
    throw workerFailed('this environment has no Web Workers: open the session with { worker: false }');
  }
  // Written literally, so bundlers (Vite, webpack 5) find and bundle the worker script.
  const w = new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'webmpc-engine' });
  return {
    post: (m, t) => w.postMessage(m, t ?? []),
    listen: (onMessage, onDeath) => {
      w.addEventListener('message', (e: MessageEvent<WorkerMessage>) => onMessage(e.data));
      // A load failure or an uncaught error in the worker: its message may hold anything, so it
      // is not repeated here.
      w.addEventListener('error', (e: Event) => {
        e.preventDefault?.();
        onDeath(workerFailed('the engine worker failed to load or crashed'));
      });
      w.addEventListener('messageerror', () => onDeath(workerFailed('a message from the engine worker could not be read')));
    },
    keepAlive: () => {},
    terminate: async () => w.terminate(),
  };
}

/** Engine workers started and not yet ended, in this realm (tests: none is left behind). */
let live = 0;

/** @internal The number of engine workers alive in this realm. */
export function _liveEngineWorkers(): number {
  return live;
}

/**
 * An engine worker started ahead of its session (see {@link prestartEngineWorker}), with the
 * main module it was started with.
 */
let spare: { main: WebAssembly.Module; worker: Promise<EngineWorker> } | undefined;

/**
 * @internal Starts an engine worker now, for the next session of this realm to take instead of
 * starting its own: a worker's start (a new JS realm, the SDK's modules, instantiating the Wasm:
 * 100–600 ms on the 2-core test VM, depending on load) then overlaps whatever the caller does
 * before that session exists — `webmpc party` connecting and authenticating. At most one is kept;
 * a second call while one waits does nothing. Unused, it does not keep the process alive.
 */
export function prestartEngineWorker(main: WebAssembly.Module): void {
  if (spare) return;
  const worker = EngineWorker.start({ main });
  worker.catch(() => {});
  spare = { main, worker };
}

/**
 * @internal A worker for a session: the prestarted one when it was started with the same main
 * module (a spare that failed to start is dropped and a fresh one started), else a fresh one.
 */
export async function takeEngineWorker(main: WebAssembly.Module): Promise<EngineWorker> {
  const s = spare;
  if (s?.main === main) {
    spare = undefined;
    try {
      return await s.worker;
    } catch {
      // Its failure said nothing about the next start: try once more, as without a spare.
    }
  }
  return EngineWorker.start({ main });
}

/** @internal Ends the prestarted worker if no session took it. */
export async function discardSpareEngineWorker(): Promise<void> {
  const s = spare;
  spare = undefined;
  await s?.worker.then(
    (w) => w.terminate(),
    () => {},
  );
}

/** What an operation's host side needs: the transport its bytes go over, and its hooks. */
export interface OperationHooks {
  readonly transport: Transport;
  progress(phase: string, done: number, total: number): void;
  /** The next piece of a streamed circuit, or null at its end. */
  pull?(): Promise<Uint8Array | null>;
  /** Runs a task in the operation's parallel instances (see `Instances` in protocols/types.ts). */
  instances?(task: string, args: readonly unknown[]): Promise<unknown[]>;
}

/** One engine worker, serving one session, one operation at a time. */
export class EngineWorker {
  readonly #w: PlatformWorker;
  #dead: WebmpcError | undefined;
  #nextId = 1;
  /** The operation in progress: its id, hooks and settlement. */
  #current: { id: number; hooks: OperationHooks; resolve(v: unknown): void; reject(e: Error): void } | undefined;
  /** Modules the worker already has, by name. */
  readonly #shipped = new Set<string>();
  /** Tests only (see {@link _holdResults}): how long each result waits before it settles. */
  #holdResultsMs = 0;
  /**
   * The worker's messages, handled in bounded slices per task, in order (see relay.ts): a burst
   * of sends or progress never holds this thread — and the transport's heartbeats — for long.
   */
  readonly #relay = new SlicedRelay<WorkerMessage>(
    (m) => this.#onMessage(m),
    (m) => (m.t === 'send' ? m.data.byteLength : 0),
  );

  private constructor(w: PlatformWorker) {
    this.#w = w;
  }

  /** Starts a worker with the compiled `modules` (at least `main`); rejects with `WORKER_FAILED`. */
  static async start(modules: { readonly [name: string]: WebAssembly.Module }): Promise<EngineWorker> {
    let w: PlatformWorker;
    try {
      w = await spawn();
    } catch (err) {
      throw err instanceof WebmpcError ? err : workerFailed('the engine worker could not be started', err);
    }
    const engine = new EngineWorker(w);
    live++;
    for (const name of Object.keys(modules)) engine.#shipped.add(name);
    let started!: { resolve(): void; reject(e: WebmpcError): void };
    const ready = new Promise<void>((resolve, reject) => (started = { resolve, reject }));
    w.listen(
      (m) => {
        if (m.t === 'ready') started.resolve();
        else if (m.t === 'failed') started.reject(fromWire(m.error));
        else engine.#relay.push(m);
      },
      (error) => {
        started.reject(error);
        engine.#die(error);
      },
    );
    w.keepAlive(true);
    const timer = setTimeout(() => started.reject(workerFailed(`the engine worker did not start within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
    try {
      w.post({ t: 'init', modules });
      await ready;
    } catch (err) {
      engine.#die(err instanceof WebmpcError ? err : workerFailed('the engine worker could not be started', err));
      await w.terminate().catch(() => {});
      throw err;
    } finally {
      clearTimeout(timer);
      w.keepAlive(false);
    }
    return engine;
  }

  /** Whether the worker has module `name` already. */
  has(name: string): boolean {
    return this.#shipped.has(name);
  }

  /** Runs `op` in the worker, moving its bytes over `hooks.transport`. One at a time. */
  perform(op: WorkerOp, hooks: OperationHooks, modules?: { readonly [name: string]: WebAssembly.Module }): Promise<unknown> {
    if (this.#dead) return Promise.reject(this.#dead);
    if (this.#current) return Promise.reject(new WebmpcError('BUSY', 'the engine worker is already running an operation'));
    const id = this.#nextId++;
    let abandon: ReturnType<typeof setTimeout> | undefined;
    return new Promise<unknown>((resolve, reject) => {
      this.#current = { id, hooks, resolve, reject };
      // Only operations that talk are tied to the transport: preparing a circuit or freeing
      // state is local, and must work (or fail on its own terms) even once a failed run has
      // closed the transport.
      const talks = op.op !== 'prepare' && op.op !== 'free';
      if (talks) void hooks.transport.closed.then((reason) => {
        if (this.#current?.id !== id) return;
        const end = () => {
          if (this.#current?.id !== id) return;
          // Closed with an error of this party's (the worker's own failure, closing its channel
          // before it reports; a cancel): that error is the verdict, not the transport's CLOSED
          // that wraps it, or a run's failure would read "transport closed" whenever the close
          // overtakes the worker's report.
          const own = reason instanceof TransportError && reason.code === 'CLOSED' && reason.cause instanceof WebmpcError ? reason.cause : reason;
          const why = own instanceof WebmpcError ? own : workerFailed('the operation was abandoned: its transport closed');
          this.#die(why);
          void this.#w.terminate().catch(() => {});
        };
        // Closed here with an error (a cancel, this party's own verdict): the operation has
        // failed whatever the worker does next, and a worker inside a long Wasm call would only
        // notice at its next send or receive — up to a second later on a loaded machine, while
        // the peers already know. Fail it now. Closed by a peer (its abort, its death) or
        // gracefully: give the worker time to finish what it holds — when a cheater's own
        // check trips first, the honest party's check of the same messages is what proves the
        // cheating here, and it must not be cut off by the cheater's abort.
        const byPeer = reason instanceof TransportError && reason.code === 'PEER_DISCONNECTED';
        if (reason instanceof Error && !byPeer) end();
        else abandon = setTimeout(end, byPeer ? PEER_CLOSE_GRACE_MS : ABANDON_AFTER_MS);
      });
      this.#w.keepAlive(true);
      const shipped = modules ? Object.fromEntries(Object.entries(modules).filter(([n]) => !this.#shipped.has(n))) : undefined;
      for (const name of Object.keys(shipped ?? {})) this.#shipped.add(name);
      this.#w.post({ t: 'op', id, ...op, ...(shipped && Object.keys(shipped).length > 0 ? { modules: shipped } : {}) });
    }).finally(() => {
      clearTimeout(abandon);
      this.#current = undefined;
      this.#w.keepAlive(false);
    });
  }

  /** Ends the worker and releases its memory (its Wasm instances, the session's state). */
  async terminate(): Promise<void> {
    this.#die(new WebmpcError('WORKER_FAILED', 'the engine worker was terminated'));
    await this.#w.terminate().catch(() => {});
  }

  /**
   * @internal Tests: ends the worker the way a crash would (Node: its `exit` event fails the
   * operation in progress with `WORKER_FAILED`), not the way {@link terminate} does.
   */
  async _kill(): Promise<void> {
    await this.#w.terminate();
  }

  /**
   * @internal Tests: holds each operation's result `ms` before settling it, as a worker still
   * inside a long call would (what a peer's close must not cut off; see PEER_CLOSE_GRACE_MS).
   */
  _holdResults(ms: number): void {
    this.#holdResultsMs = ms;
  }

  #die(error: WebmpcError): void {
    if (this.#dead) return;
    this.#dead = error;
    live--;
    this.#relay.stop();
    const current = this.#current;
    if (current) {
      // Whatever the protocol was waiting for will not come: its peers must learn at once.
      void current.hooks.transport.close(error);
      current.reject(error);
    }
  }

  #reply(id: number, value: unknown, transfer: ArrayBuffer[] = []): void {
    if (!this.#dead) this.#w.post({ t: 'reply', id, value }, transfer);
  }

  #replyError(id: number, err: unknown): void {
    if (!this.#dead) this.#w.post({ t: 'reply', id, error: toWire(err) });
  }

  #onMessage(m: WorkerMessage): void {
    const current = this.#current;
    if (!current || this.#dead) return;
    const { transport } = current.hooks;
    switch (m.t) {
      case 'done': {
        if (m.id !== current.id) return;
        const settle = () => {
          if (this.#current !== current || this.#dead) return;
          trace('engine host', 'operation done', { failed: m.error !== undefined });
          if (m.error) current.reject(fromWire(m.error));
          else current.resolve(m.value);
        };
        if (this.#holdResultsMs > 0) setTimeout(settle, this.#holdResultsMs);
        else settle();
        return;
      }
      case 'send':
        transport.send(m.to, m.data).then(
          () => this.#reply(m.id, undefined),
          (err: unknown) => this.#replyError(m.id, err),
        );
        return;
      case 'recv':
        transport.recv(m.from, m.timeoutMs === undefined ? {} : { timeoutMs: m.timeoutMs }).then(
          // The transport handed us these bytes: they move on to the worker without a copy.
          (data) => this.#reply(m.id, data, transferOf(data)),
          (err: unknown) => this.#replyError(m.id, err),
        );
        return;
      case 'close':
        void transport.close(m.reason ? fromWire(m.reason) : undefined);
        return;
      case 'pull': {
        const pull = current.hooks.pull;
        if (!pull) {
          this.#replyError(m.id, workerFailed('the engine worker asked for circuit pieces in an operation without a streamed circuit'));
          return;
        }
        pull().then(
          (piece) => this.#reply(m.id, piece),
          (err: unknown) => this.#replyError(m.id, err),
        );
        return;
      }
      case 'progress':
        current.hooks.progress(m.phase, m.done, m.total);
        return;
      case 'instances': {
        const run = current.hooks.instances;
        if (!run) {
          this.#replyError(m.id, workerFailed('the engine worker asked for parallel instances in an operation without any'));
          return;
        }
        run(m.task, m.args).then(
          (results) => this.#reply(m.id, results),
          (err: unknown) => this.#replyError(m.id, err),
        );
        return;
      }
      default:
        return;
    }
  }
}
