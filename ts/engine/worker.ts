/**
 * The engine worker: where a session's cryptography runs (a module Web Worker in browsers, a
 * `worker_threads` worker in Node), so the caller's thread stays free to paint, answer input and
 * keep its transports' heartbeats going. Started by `worker-host.ts`; the messages are in
 * `worker-protocol.ts`.
 *
 * It holds its own Wasm instances (instantiated from modules the host compiled, so nothing is
 * fetched twice) and the session's protocol state (set-ups, preprocessed material), and runs the
 * same protocol modules as the in-thread mode, over a transport whose bytes the host moves: a
 * `send` here is a `send` on the session's transport there, a `recv` likewise.
 */
import { encodeBinary } from '../circuit/binary.js';
import { PreparedCircuit, type StreamedCircuit } from '../circuit/source.js';
import { parseBristol } from '../circuit/wasm.js';
import { ProtocolAbort, TransportError, WebmpcError, fromWasmError } from '../errors.js';
import type { RecvOptions, Transport } from '../net/transport.js';
import { programOf } from '../program/program.js';
import { protocolModule } from '../protocols/index.js';
import { runEach } from '../protocols/runs.js';
import type { CircuitJob, InstanceContext, ProgramJob, ProtocolContext } from '../protocols/types.js';
import { setModuleSources } from './modules.js';
import { loadWasm, wasm } from './wasm.js';
import { trace, traceClock, traceCount, traceCounters, TRACING } from '../trace.js';
import {
  fromWire,
  OT_METHODS,
  toWire,
  transferOf,
  type ContextInit,
  type HostMessage,
  type PreparedShape,
  type WireCircuit,
  type WireJob,
  type WorkerMessage,
  type WorkerOp,
} from './worker-protocol.js';

interface Port {
  post(message: WorkerMessage, transfer?: ArrayBuffer[]): void;
}

/**
 * The host's channel: a Web Worker's global scope, or Node's `parentPort`. No top-level await:
 * bundlers build workers as classic scripts (Vite's default worker format is an IIFE). In a
 * browser the listener is attached at once (messages that find no listener are lost); Node keeps a
 * port's messages until a listener is attached, so its `parentPort` may be found asynchronously.
 * Messages that arrive before the port is known wait in `early`.
 */
let port: Port | undefined;
const early: HostMessage[] = [];

function connect(): void {
  const g = globalThis as unknown as {
    postMessage?: (m: unknown, t?: ArrayBuffer[]) => void;
    addEventListener?: (type: 'message', h: (e: { data: HostMessage }) => void) => void;
    process?: { versions?: { node?: string } };
  };
  if (typeof g.process?.versions?.node !== 'string') {
    port = { post: (m, t) => g.postMessage!(m, t ?? []) };
    g.addEventListener!('message', (e) => handle(e.data));
    return;
  }
  // Hidden from bundlers, like the other `node:` imports: a browser build never reaches it.
  const specifier = 'node:worker_threads';
  void (import(/* webpackIgnore: true */ /* @vite-ignore */ specifier) as Promise<typeof import('node:worker_threads')>).then(({ parentPort }) => {
    if (!parentPort) throw new Error('webmpc engine worker: not started as a worker');
    port = { post: (m, t) => parentPort.postMessage(m, t ?? []) };
    parentPort.on('message', (m: HostMessage) => handle(m));
    for (const m of early.splice(0)) handle(m);
  });
}

/** Requests to the host awaiting its reply, by id. */
const waiting = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
let nextId = 1;

function post(message: WorkerMessage, transfer?: ArrayBuffer[]): void {
  if (!TRACING) return port!.post(message, transfer);
  const t0 = traceClock();
  port!.post(message, transfer);
  traceCount(`worker.post.${message.t}`);
  traceCount(`worker.post.${message.t}.ms`, traceClock() - t0);
}

function request(message: (id: number) => WorkerMessage, transfer: ArrayBuffer[] = []): Promise<unknown> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    post(message(id), transfer);
  });
}

/**
 * The session's transport as seen from here. Bytes received move in by transfer; bytes sent are
 * transferred when the caller says it is done with them (`owned`: the Wasm channel's messages are
 * fresh buffers nobody else holds), copied otherwise.
 */
class PortTransport implements Transport {
  readonly party: number;
  readonly parties: number;
  readonly closed: Promise<Error | undefined>;
  #closedWith: WebmpcError | undefined;
  #resolveClosed!: (e: Error | undefined) => void;

  constructor(party: number, parties: number) {
    this.party = party;
    this.parties = parties;
    this.closed = new Promise((r) => (this.#resolveClosed = r));
  }

  async send(to: number, data: Uint8Array, owned?: boolean): Promise<void> {
    if (this.#closedWith) throw this.#closedWith;
    const t0 = TRACING ? traceClock() : 0;
    const size = data.byteLength;
    await request((id) => ({ t: 'send', id, to, data }), owned ? transferOf(data) : []);
    if (TRACING) {
      traceCount('worker.sends');
      traceCount('worker.sendBytes', size);
      traceCount('worker.sendWaitMs', traceClock() - t0);
    }
  }

  async recv(from: number, options?: RecvOptions): Promise<Uint8Array> {
    if (this.#closedWith) throw this.#closedWith;
    if (options?.signal) throw new WebmpcError('INVALID_ARGUMENT', 'recv in the engine worker takes no AbortSignal (the session cancels by closing the transport)');
    const t0 = TRACING ? traceClock() : 0;
    const data = (await request((id) => ({ t: 'recv', id, from, timeoutMs: options?.timeoutMs }))) as Uint8Array;
    if (TRACING) {
      traceCount('worker.recvs');
      traceCount('worker.recvBytes', data.byteLength);
      traceCount('worker.recvWaitMs', traceClock() - t0);
    }
    return data;
  }

  async close(reason?: Error): Promise<void> {
    if (this.#closedWith) return;
    this.#closedWith = reason instanceof WebmpcError ? reason : new TransportError('CLOSED', 'transport closed');
    post({ t: 'close', reason: reason === undefined ? undefined : toWire(reason) });
    this.#resolveClosed(reason);
  }
}

/** Protocol state kept across operations, by protocol name (this worker serves one session). */
const states = new Map<string, unknown>();
/** Prepared circuits by content hash (hex), so a circuit run again is not sent or decoded again. */
const circuits = new Map<string, PreparedCircuit>();
const CIRCUIT_CACHE = 4;

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

function circuitOf(w: WireCircuit): PreparedCircuit | StreamedCircuit {
  if (w.type === 'streamed') {
    return {
      prefix: w.prefix,
      hash: w.hash,
      ...(w.owners ? { owners: w.owners } : {}),
      // Pulled from the host one piece at a time, as the protocol asks for them.
      async *pieces() {
        for (;;) {
          const piece = (await request((id) => ({ t: 'pull', id }))) as Uint8Array | null;
          if (piece === null) return;
          yield piece;
        }
      },
    };
  }
  return cached(w.binary, w.owners, w.hash);
}

/** The prepared circuit for `binary` (known by its hash, or decoded and validated now and kept). */
function cached(binary: Uint8Array, owners: readonly number[] | undefined, hash?: Uint8Array): PreparedCircuit {
  const have = hash ? circuits.get(hex(hash)) : undefined;
  if (have && sameOwners(have.owners, owners)) return have;
  const prepared = new PreparedCircuit(binary, owners);
  const key = hex(prepared.hash);
  circuits.get(key)?.free();
  circuits.set(key, prepared);
  for (const [k, old] of circuits) {
    if (circuits.size <= CIRCUIT_CACHE) break;
    if (k !== key) {
      circuits.delete(k);
      old.free();
    }
  }
  return prepared;
}

function sameOwners(a: readonly number[] | undefined, b: readonly number[] | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.length === b.length && a.every((x, i) => x === b[i]));
}

async function jobOf(w: WireJob): Promise<CircuitJob<never> | ProgramJob<never>> {
  const roles = w.roles as never;
  if (w.kind === 'program') {
    const program = await programOf(w.program);
    return { kind: 'program', program, hash: w.hash, owners: w.owners, outputs: w.outputs, inputs: w.inputs, roles };
  }
  return { kind: 'circuit', circuit: circuitOf(w.circuit), shape: w.shape, hash: w.hash, owners: w.owners, outputs: w.outputs, inputs: w.inputs, roles };
}

/** Maps what a Wasm call throws; a protocol verdict closes the transport at once, so peers abort. */
function caller(transport: PortTransport) {
  return async <T>(f: () => Promise<T>): Promise<T> => {
    try {
      return await f();
    } catch (err) {
      const e = fromWasmError(err);
      if (e instanceof ProtocolAbort) await transport.close(e);
      throw e;
    }
  };
}

function contextFor(name: string, init: ContextInit, transport: PortTransport): ProtocolContext<unknown> {
  const count = init.instances ?? 0;
  return {
    instances:
      count > 0
        ? {
            count,
            run: async (task, args) => {
              if (args.length !== count) throw new WebmpcError('INVALID_ARGUMENT', `instances.run needs one argument per instance (${count})`);
              return (await request((id) => ({ t: 'instances', id, task, args }))) as unknown[];
            },
          }
        : undefined,
    transport,
    party: init.party,
    parties: init.parties,
    sessionId: init.sessionId,
    signal: undefined,
    progress: (phase, done, total) => post({ t: 'progress', phase, done, total }),
    // As in the session's own thread: a verdict closes the transport at once, so peers abort.
    call: caller(transport),
    get state() {
      return states.get(name);
    },
    set state(value) {
      states.set(name, value);
    },
  };
}

/** Instance states (this worker serves one instance index of the session), by protocol name. */
const instanceStates = new Map<string, unknown>();

function instanceContextFor(name: string, init: ContextInit & { index: number }, transport: PortTransport): InstanceContext {
  return {
    transport,
    party: init.party,
    parties: init.parties,
    sessionId: init.sessionId,
    index: init.index,
    progress: (phase, done, total) => post({ t: 'progress', phase, done, total }),
    call: caller(transport),
    get state() {
      return instanceStates.get(name);
    },
    set state(value) {
      instanceStates.set(name, value);
    },
  };
}

/**
 * The OT extension instance of a standalone OT sender or receiver (`ts/ot.ts` with `threads` > 1:
 * one instance per worker). Its Wasm channel keeps the transport of the `ot-setup` operation;
 * whatever it sends or receives later goes, like every request, over the transport of the
 * operation in progress, which the host keeps the same (the instance's sub-channel).
 */
let ot: { role: 'sender' | 'receiver'; raw: { free(): void } & Record<string, unknown> } | undefined;

async function performOt(op: Extract<WorkerOp, { op: 'ot-setup' | 'ot-call' }>, transport: PortTransport): Promise<unknown> {
  const call = caller(transport);
  if (op.op === 'ot-setup') {
    if (ot) throw new WebmpcError('BUSY', 'this engine worker already holds an OT instance');
    const w = wasm();
    const { sessionId } = op.ctx;
    const raw = (await call(() =>
      op.role === 'sender'
        ? (w.otSenderSetup(transport, op.peer, sessionId, op.delta, op.allowHashed) as Promise<unknown>)
        : (w.otReceiverSetup(transport, op.peer, sessionId) as Promise<unknown>),
    )) as { free(): void } & Record<string, unknown>;
    op.delta.fill(0);
    ot = { role: op.role, raw };
    return undefined;
  }
  if (!ot) throw new WebmpcError('INVALID_ARGUMENT', 'this engine worker holds no OT instance');
  if (!(OT_METHODS[ot.role] as readonly string[]).includes(op.method)) {
    throw new WebmpcError('INVALID_ARGUMENT', `an OT ${ot.role} has no call '${String(op.method).slice(0, 40)}'`);
  }
  const raw = ot.raw;
  const f = raw[op.method] as (arg: number | Uint8Array) => Promise<unknown>;
  try {
    return await call(() => f.call(raw, op.arg));
  } finally {
    // Chosen messages and correlations are secrets: this copy is done with.
    if (op.arg instanceof Uint8Array) op.arg.fill(0);
  }
}

/** The buffers of an OT call's result (bytes, or an object of bytes such as `{ choices, messages }`). */
function otTransfer(value: unknown): ArrayBuffer[] {
  if (value instanceof Uint8Array) return transferOf(value);
  if (typeof value !== 'object' || value === null) return [];
  return Object.values(value).flatMap((v) => (v instanceof Uint8Array ? transferOf(v) : []));
}

function freeAll(): void {
  ot?.raw.free();
  ot = undefined;
  for (const [name, state] of states) if (state !== undefined) protocolModule(name)?.free?.(state);
  states.clear();
  for (const [name, state] of instanceStates) if (state !== undefined) protocolModule(name)?.freeInstance?.(state);
  instanceStates.clear();
  for (const c of circuits.values()) c.free();
  circuits.clear();
}

async function perform(op: WorkerOp): Promise<unknown> {
  if (op.op === 'free') {
    freeAll();
    return undefined;
  }
  if (op.op === 'prepare') {
    // Decoding, validating and hashing a circuit is the worker's work too: the caller's thread
    // only learns its shape and hash (and the binary form of Bristol text).
    const source = op.source;
    const binary =
      'bristol' in source ? parseBristol(source.bristol).binary : 'gates' in source ? encodeBinary(source.gates) : source.binary;
    const p = cached(binary, 'bristol' in source ? undefined : source.owners);
    const shape: PreparedShape = {
      inputWidths: p.inputWidths,
      outputWidths: p.outputWidths,
      gates: p.gates,
      hash: p.hash,
      binary: 'binary' in source ? undefined : p.binary,
    };
    return shape;
  }
  if (op.op === 'ot-setup' || op.op === 'ot-call') {
    const init = op.op === 'ot-setup' ? op.ctx : undefined;
    // The transport's shape only matters to the set-up (the Wasm channel keeps that one).
    return performOt(op, new PortTransport(init?.party ?? 0, init?.parties ?? 2));
  }
  const module = protocolModule(op.protocol);
  if (!module) throw new WebmpcError('INVALID_ARGUMENT', `unknown protocol '${op.protocol}'`);
  const transport = new PortTransport(op.ctx.party, op.ctx.parties);
  if (op.op === 'instance') {
    const task = module.instanceTasks?.[op.task];
    if (!task) throw new WebmpcError('INVALID_ARGUMENT', `protocol '${module.name}' has no instance task '${op.task}'`);
    return task(instanceContextFor(module.name, op.ctx, transport), op.args);
  }
  const ctx = contextFor(module.name, op.ctx, transport);
  // This party's own options that ride along with the roles or parameters (see localOptions).
  const withLocal = async <T>(x: T): Promise<T> =>
    op.local !== undefined && module.localOptions ? ((await module.localOptions.receive(x as object, op.local)) as T) : x;
  if (op.op === 'run' || op.op === 'run-many') {
    const job = await jobOf(op.job);
    const settled = { ...job, roles: await withLocal(job.roles) } as never;
    return op.op === 'run' ? module.run(ctx, settled) : runEach(module.run, ctx, settled, op.runs);
  }
  if (!module.preprocess) throw new WebmpcError('INVALID_ARGUMENT', `protocol '${module.name}' has no preprocessing`);
  return module.preprocess.run(ctx, (await withLocal(op.params)) as never);
}

function handle(m: HostMessage): void {
  if (!port) {
    early.push(m);
    return;
  }
  switch (m.t) {
    case 'init':
      void (async () => {
        try {
          const { main, ...others } = m.modules;
          if (!main) throw new WebmpcError('WORKER_FAILED', 'the engine worker was started without the main Wasm module');
          trace('worker', 'loading wasm');
          await loadWasm({ wasm: main, modules: others });
          trace('worker', 'wasm loaded');
          post({ t: 'ready' });
        } catch (err) {
          post({ t: 'failed', error: toWire(fromWasmError(err)) });
        }
      })();
      return;
    case 'op':
      void (async () => {
        if (m.modules) setModuleSources(m.modules);
        const where = `worker ${'ctx' in m ? m.ctx.party : ''}`;
        trace(where, `${m.op} start`);
        try {
          const value = await perform(m);
          trace(where, `${m.op} done`);
          traceCounters(where);
          // An OT call's outputs are fresh arrays the Wasm made for this call: they move to the
          // host instead of being copied (other operations' results may be held here too).
          post({ t: 'done', id: m.id, value }, m.op === 'ot-call' ? otTransfer(value) : []);
        } catch (err) {
          post({ t: 'done', id: m.id, error: toWire(fromWasmError(err)) });
        }
      })();
      return;
    case 'reply': {
      const w = waiting.get(m.id);
      if (!w) return;
      waiting.delete(m.id);
      if (m.error) w.reject(fromWire(m.error));
      else w.resolve(m.value);
      return;
    }
  }
}

connect();
