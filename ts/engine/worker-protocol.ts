/**
 * The messages between a session's thread and its engine worker (`worker.ts`), and how errors
 * cross between them. Both sides import this module; it has no side effects.
 *
 * The caller's thread keeps the API, the transports (an RTCDataChannel cannot move to a worker
 * everywhere), heartbeats and progress; the worker holds the Wasm instances and runs the
 * protocol. Bytes cross by transfer: a message's buffer moves to the other side instead of being
 * copied.
 *
 * Conversation (`id`s are per direction):
 *
 * ```text
 * host → worker   init { modules }                     → ready | failed
 *                 op   { id, op: run | run-many | preprocess | instance | prepare | ot-setup | ot-call | free,
 *                        modules?, … }                   → done { id, value | error }
 *                 reply{ id, value | error }            (answers to the worker's requests)
 * worker → host   send { id, channel, to, data }        → reply
 *                 recv { id, channel, from, timeoutMs } → reply { value: data }
 *                 close{ channel, reason? }             (a verdict: the host closes that transport)
 *                 pull { id }                           → reply { value: piece | null }  (streamed circuits)
 *                 instances { id, task, args }          → reply { value: results }  (parallel instances)
 *                 progress { phase, done, total }
 * ```
 */
import type { UnpreparedForm } from '../circuit/source.js';
import {
  CircuitError,
  EnclaveAbort,
  KernelError,
  ProtocolAbort,
  TransportError,
  WebmpcError,
  type ProtocolAbortCode,
  type RemoteCloseReason,
  type TransportErrorCode,
} from '../errors.js';

/** An error as it crosses to the other side: its class, code, message and public details. */
export interface WireError {
  readonly name: string;
  readonly code: string;
  readonly message: string;
  readonly peer?: number | undefined;
  readonly phase?: string | undefined;
  readonly check?: string | undefined;
  readonly suspect?: string | undefined;
  readonly reason?: string | undefined;
  readonly enclaveCode?: string | undefined;
  readonly remote?: RemoteCloseReason | undefined;
  readonly line?: number | undefined;
  readonly offset?: number | undefined;
}

/** What is safe to send of `err`: the SDK's own errors keep their class and fields (never a secret, by their rule); anything else becomes a generic failure without its text. */
export function toWire(err: unknown): WireError {
  if (err instanceof WebmpcError) {
    const e = err as WebmpcError & Partial<Record<'peer' | 'phase' | 'check' | 'suspect' | 'reason' | 'enclaveCode' | 'line' | 'offset', unknown>> & {
      remote?: RemoteCloseReason;
    };
    const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
    const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
    return {
      name: err.name,
      code: err.code,
      message: err.message,
      peer: num(e.peer),
      phase: str(e.phase),
      check: str(e.check),
      suspect: str(e.suspect),
      reason: str(e.reason),
      enclaveCode: str(e.enclaveCode),
      remote: e.remote,
      line: num(e.line),
      offset: num(e.offset),
    };
  }
  return { name: 'WebmpcError', code: 'WORKER_FAILED', message: 'the engine worker failed with an unexpected error' };
}

/** The error `w` describes, as the class it was thrown as. */
export function fromWire(w: WireError): WebmpcError {
  const peer = w.peer === undefined ? {} : { peer: w.peer };
  switch (w.name) {
    case 'TransportError':
      return new TransportError(w.code as TransportErrorCode, w.message, { ...peer, ...(w.remote ? { remote: w.remote } : {}) });
    case 'EnclaveAbort':
      return new EnclaveAbort(w.code as ProtocolAbortCode, w.message, {
        ...peer,
        ...(w.check ? { check: w.check } : {}),
        ...(w.suspect ? { suspect: w.suspect } : {}),
        ...(w.reason ? { reason: w.reason } : {}),
        ...(w.enclaveCode ? { enclaveCode: w.enclaveCode } : {}),
      });
    case 'ProtocolAbort':
      // ProtocolAbort reads its phase and check from the Wasm error it wraps (its cause).
      return new ProtocolAbort(w.code as ProtocolAbortCode, w.message, { ...peer, cause: { phase: w.phase, check: w.check } });
    case 'KernelError':
      return new KernelError(w.code as never, w.message);
    case 'CircuitError':
      return new CircuitError(w.code as never, w.message, { line: w.line, offset: w.offset });
    default:
      return new WebmpcError(w.code as never, w.message);
  }
}

/** The failure of the worker itself (it crashed, ran out of memory, or would not start). */
export function workerFailed(message: string, cause?: unknown): WebmpcError {
  return new WebmpcError('WORKER_FAILED', message, cause === undefined ? undefined : { cause });
}

/** What the worker is asked to do. */
export type WorkerOp =
  | { readonly op: 'run'; readonly protocol: string; readonly ctx: ContextInit; readonly job: WireJob; readonly local?: unknown }
  | {
      /**
       * `job` once per entry of `runs` (this party's inputs of each run; `job.inputs` is unused),
       * one after another, resolving with their outputs in order (`Session.runMany`).
       */
      readonly op: 'run-many';
      readonly protocol: string;
      readonly ctx: ContextInit;
      readonly job: WireJob;
      readonly runs: readonly (readonly Uint8Array[])[];
      readonly local?: unknown;
    }
  | { readonly op: 'preprocess'; readonly protocol: string; readonly ctx: ContextInit; readonly params: unknown; readonly local?: unknown }
  | {
      readonly op: 'instance';
      readonly protocol: string;
      readonly task: string;
      readonly ctx: ContextInit & { readonly index: number };
      readonly args: unknown;
    }
  | {
      /** Sets up the worker's one OT extension instance (standalone OT, `ts/ot.ts`) with `peer`. */
      readonly op: 'ot-setup';
      readonly ctx: ContextInit;
      readonly peer: number;
      readonly role: 'sender' | 'receiver';
      /** Sender: Δ (16 bytes), or empty for a random one. */
      readonly delta: Uint8Array;
      readonly allowHashed: boolean;
    }
  | {
      /** One call on the worker's OT instance: `arg` is its count or its bytes. */
      readonly op: 'ot-call';
      readonly method: OtMethod;
      readonly arg: number | Uint8Array;
    }
  | { readonly op: 'prepare'; readonly source: UnpreparedForm }
  | { readonly op: 'free' };

/** The OT instance calls a worker runs, by role (the names of the Wasm classes' methods). */
export const OT_METHODS = {
  sender: ['sendRandom', 'sendCot', 'sendChosen', 'sendCorrelated'],
  receiver: ['receiveRandom', 'receiveCot', 'receiveChosen', 'receiveCorrelated'],
} as const;
export type OtMethod = (typeof OT_METHODS)[keyof typeof OT_METHODS][number];

/** What `prepare` finds: the shape and hash (and, for Bristol text or gate arrays, the binary form it made). */
export interface PreparedShape {
  readonly inputWidths: number[];
  readonly outputWidths: number[];
  readonly gates: number;
  readonly hash: Uint8Array;
  readonly binary: Uint8Array | undefined;
}

/** The parts of a protocol context that are plain data. */
export interface ContextInit {
  readonly party: number;
  readonly parties: number;
  readonly sessionId: Uint8Array;
  /** Parallel instances the primary may use (0: none). */
  readonly instances?: number;
}

/**
 * A circuit as it crosses: its binary form (the worker keeps the last few it validated, by hash,
 * and does not decode them again) or a stream.
 */
export type WireCircuit =
  | { readonly type: 'prepared'; readonly hash: Uint8Array; readonly binary: Uint8Array; readonly owners: readonly number[] | undefined }
  | { readonly type: 'streamed'; readonly prefix: Uint8Array; readonly hash: Uint8Array; readonly owners: readonly number[] | undefined };

/** A job as it crosses: everything but the circuit or program object is plain data already. */
export type WireJob =
  | {
      readonly kind: 'circuit';
      readonly circuit: WireCircuit;
      readonly shape: { readonly inputWidths: readonly number[]; readonly outputWidths: readonly number[]; readonly gates: number };
      readonly hash: Uint8Array;
      readonly owners: readonly number[];
      readonly outputs: readonly (readonly number[])[];
      readonly inputs: readonly Uint8Array[];
      readonly roles: unknown;
    }
  | {
      readonly kind: 'program';
      readonly program: Uint8Array;
      readonly hash: Uint8Array;
      readonly owners: readonly number[];
      readonly outputs: readonly (readonly number[])[];
      readonly inputs: readonly Uint8Array[];
      readonly roles: unknown;
    };

export type HostMessage =
  | { readonly t: 'init'; readonly modules: { readonly [name: string]: WebAssembly.Module } }
  | ({ readonly t: 'op'; readonly id: number; readonly modules?: { readonly [name: string]: WebAssembly.Module } } & WorkerOp)
  | { readonly t: 'reply'; readonly id: number; readonly value?: unknown; readonly error?: WireError };

export type WorkerMessage =
  | { readonly t: 'ready' }
  | { readonly t: 'failed'; readonly error: WireError }
  | { readonly t: 'done'; readonly id: number; readonly value?: unknown; readonly error?: WireError }
  | { readonly t: 'send'; readonly id: number; readonly to: number; readonly data: Uint8Array }
  | { readonly t: 'recv'; readonly id: number; readonly from: number; readonly timeoutMs: number | undefined }
  | { readonly t: 'close'; readonly reason: WireError | undefined }
  | { readonly t: 'pull'; readonly id: number }
  | { readonly t: 'instances'; readonly id: number; readonly task: string; readonly args: readonly unknown[] }
  | { readonly t: 'progress'; readonly phase: string; readonly done: number; readonly total: number };

/**
 * The buffers to transfer with a message carrying `bytes`: the whole underlying buffer when the
 * view covers all of it (then the sender's copy becomes unusable, which is what we want for
 * secrets), else nothing (the structured clone copies the view's bytes).
 */
export function transferOf(bytes: Uint8Array | undefined): ArrayBuffer[] {
  if (!bytes) return [];
  const b = bytes.buffer;
  return b instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === b.byteLength && b.byteLength > 0 ? [b] : [];
}
