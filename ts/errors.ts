/**
 * Errors thrown by webmpc. Every error the SDK raises on purpose is a {@link WebmpcError} with a
 * stable string `code`, so callers can branch on `err.code` rather than on message text (which
 * may change). Messages name arguments and lengths only, never argument contents: inputs to MPC
 * kernels are often secret, and error messages end up in logs.
 */

/** Codes of {@link KernelError}: the reasons a kernel refuses its arguments. */
export type KernelErrorCode =
  | 'RAGGED_LENGTH'
  | 'LENGTH_MISMATCH'
  | 'WRONG_SIZE'
  | 'INVALID_DIMENSION'
  | 'TOO_LARGE'
  | 'ENTROPY_UNAVAILABLE';

/** Codes of errors that are not about a kernel's arguments. */
export type SdkErrorCode =
  /** A kernel was called before `init()` resolved. */
  | 'NOT_INITIALIZED'
  /** The Wasm module could not be fetched, compiled or instantiated. */
  | 'WASM_LOAD_FAILED'
  /**
   * The Wasm module trapped. Argument checks are meant to make this impossible, so it is a bug;
   * the module's state may be damaged afterwards.
   */
  | 'WASM_TRAP'
  /** A caller passed an invalid argument to a protocol (sizes, session id, choice bytes). */
  | 'INVALID_ARGUMENT'
  /**
   * A teleport protocol could not reach or start its enclave: the enclave-server is unreachable
   * or closed the connection, or the backend is not available on this host.
   */
  | 'ENCLAVE_UNAVAILABLE'
  /** An arithmetic (MASCOT) program does not decode or validate. */
  | 'MALFORMED_PROGRAM'
  /** An arithmetic program's counts exceed the format's limits. */
  | 'PROGRAM_TOO_LARGE'
  /** A protocol instance was called while another call on it was running, or after it failed. */
  | 'BUSY'
  /**
   * A protocol instance (a MASCOT party) failed earlier: it aborted or lost a peer, and its state
   * cannot be used again. Retrying does not help; start a new session.
   */
  | 'SESSION_FAILED'
  /**
   * A Node feature needs an optional package that is not installed (`ws` for WebSockets and the
   * signaling server, `node-datachannel` for WebRTC in Node); the message names the package.
   */
  | 'MISSING_DEPENDENCY'
  /**
   * The worker running a session's cryptography crashed, ran out of memory, or could not start
   * (or the environment has no workers: open the session with `worker: false`). The session's
   * transport is closed, so its peers abort too.
   */
  | 'WORKER_FAILED'
  /**
   * Client–server MPC (`submit`): the compute parties did not take this client's input — the
   * input window had closed, not every server had the client when it closed, or the client did
   * not answer in time or sent different servers different values. The message says which.
   */
  | 'CLIENT_REFUSED';

/**
 * Codes of {@link TransportError}: why moving bytes between parties failed. A transport that
 * raises one of these has closed itself; the session cannot continue.
 */
export type TransportErrorCode =
  /** A peer closed its connection, crashed, or stopped answering at the network level. */
  | 'PEER_DISCONNECTED'
  /** A wait (connect, handshake, recv, backpressure) ran past its deadline. */
  | 'TIMEOUT'
  /** A peer (or relay) sent bytes that break the framing or the protocol's expectations. */
  | 'PROTOCOL_ERROR'
  /** Authentication failed: wrong identity key, tampered or replayed ciphertext, bad signature. */
  | 'AUTHENTICATION_FAILED'
  /** The signaling server refused or lost the session (room full, bad party index, gone). */
  | 'SIGNALING_FAILED'
  /** The operation was cancelled through an AbortSignal. */
  | 'ABORTED'
  /** The transport was closed locally before or during the operation. */
  | 'CLOSED'
  /** A caller passed an invalid argument (party index out of range, message to self, ...). */
  | 'INVALID_ARGUMENT'
  /**
   * The runtime lacks what this transport needs: a browser without WebRTC data channels
   * (`RTCPeerConnection` is not defined, as in WebKitGTK built without WebRTC) asked for a WebRTC
   * mesh. Use the relay (`connectRelay`) there instead.
   */
  | 'UNSUPPORTED';

/**
 * Codes of {@link ProtocolAbort}: an MPC protocol detected cheating or a broken peer and aborted.
 */
export type ProtocolAbortCode =
  /** A consistency check, MAC check or similar failed: some party deviated from the protocol. */
  | 'CHEATING_DETECTED'
  /** A peer's message had the wrong length or an invalid encoding. */
  | 'MALFORMED_MESSAGE'
  /**
   * Teleport, malicious mode: a check on what the enclave, the garbler or the evaluator sent
   * failed ({@link EnclaveAbort.check} names it, {@link EnclaveAbort.suspect} says whom it points at).
   */
  | 'ENCLAVE_CHECK_FAILED'
  /** Teleport: the enclave's evidence does not satisfy the pinned policy ({@link EnclaveAbort.reason}). */
  | 'EVIDENCE_REJECTED'
  /** Teleport: the enclave is the simulation backend (no hardware protection) and the policy does not allow it. */
  | 'SIMULATED_ENCLAVE_REFUSED'
  /** Teleport: the enclave (or the service hosting it) aborted the job ({@link EnclaveAbort.enclaveCode} says why). */
  | 'ENCLAVE_FAILED'
  /** A MAC check failed (MASCOT): a value was opened or authenticated inconsistently. */
  | 'MAC_CHECK_FAILED'
  /** A triple failed MASCOT's sacrifice: some party deviated while multiplying. */
  | 'SACRIFICE_FAILED'
  /** The parties disagree on the session's public parameters (circuit, sizes, session id). */
  | 'PARAMETER_MISMATCH';

/** Codes of {@link CircuitError}. */
export type CircuitErrorCode =
  /**
   * The circuit is not valid: bad syntax, counts that disagree, a wire out of range or read before
   * it is written, a truncated or over-long binary encoding.
   */
  | 'MALFORMED_CIRCUIT'
  /** A count in the circuit's header is above the configured ceiling. */
  | 'CIRCUIT_TOO_LARGE'
  /** Inputs of the wrong number or size for the circuit. */
  | 'WRONG_INPUT_SIZE';

export type WebmpcErrorCode = KernelErrorCode | SdkErrorCode | TransportErrorCode | ProtocolAbortCode | CircuitErrorCode;

const KERNEL_CODES: ReadonlySet<string> = new Set<KernelErrorCode>([
  'RAGGED_LENGTH',
  'LENGTH_MISMATCH',
  'WRONG_SIZE',
  'INVALID_DIMENSION',
  'TOO_LARGE',
  'ENTROPY_UNAVAILABLE',
]);

/** Base class of every error webmpc throws deliberately. */
export class WebmpcError extends Error {
  readonly code: WebmpcErrorCode;

  constructor(code: WebmpcErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'WebmpcError';
  }
}

/** A kernel refused its arguments (or, for `ENTROPY_UNAVAILABLE`, the platform has no CSPRNG). */
export class KernelError extends WebmpcError {
  declare readonly code: KernelErrorCode;

  constructor(code: KernelErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'KernelError';
  }
}

export function isKernelErrorCode(code: unknown): code is KernelErrorCode {
  return typeof code === 'string' && KERNEL_CODES.has(code);
}

/**
 * Turns whatever the Wasm side threw into a webmpc error. The Rust bindings throw plain JS
 * `Error`s named `KernelError` (wasm-bindgen cannot construct our classes), which would defeat
 * `instanceof`; a `WebAssembly.RuntimeError` is a trap.
 */
export function fromWasmError(err: unknown): unknown {
  if (err instanceof WebmpcError) return err;
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    if (err.name === 'KernelError' && isKernelErrorCode(code)) {
      return new KernelError(code, err.message, { cause: err });
    }
    if (err.name === 'ProtocolError') return fromProtocolCode(code, err);
    if (err.name === 'CircuitError' && isCircuitErrorCode(code)) {
      const { line, offset } = err as { line?: unknown; offset?: unknown };
      return new CircuitError(code, err.message, {
        cause: err,
        line: typeof line === 'number' ? line : undefined,
        offset: typeof offset === 'number' ? offset : undefined,
      });
    }
    if (typeof WebAssembly !== 'undefined' && err instanceof WebAssembly.RuntimeError) {
      return new WebmpcError('WASM_TRAP', `webmpc Wasm module trapped (${err.message}); this is a bug`, {
        cause: err,
      });
    }
  }
  return err;
}

/**
 * Why a peer said it closed the session: the `code` of the error it closed with (any
 * {@link WebmpcErrorCode}, or `ERROR` for an error of the app's own) and that error's message,
 * both as the peer sent them (sanitized: printable, at most {@link MAX_REMOTE_MESSAGE_CHARS}
 * characters). Without a secure channel, and for the transport's own close frames even with one,
 * this is not authenticated: anyone on the path could have written it. Treat it as a hint for
 * logs and users, never as evidence (e.g. of cheating).
 */
export interface RemoteCloseReason {
  readonly code: string;
  readonly message: string;
}

/** Longest {@link RemoteCloseReason.message} kept (characters). */
export const MAX_REMOTE_MESSAGE_CHARS = 200;

/** Moving bytes between parties failed; see {@link TransportErrorCode}. */
export class TransportError extends WebmpcError {
  declare readonly code: TransportErrorCode;
  /** The peer concerned, when there is one. */
  readonly peer: number | undefined;
  /** When the peer closed the session on purpose: the reason it gave. */
  readonly remote: RemoteCloseReason | undefined;

  constructor(
    code: TransportErrorCode,
    message: string,
    options?: { cause?: unknown; peer?: number; remote?: RemoteCloseReason },
  ) {
    super(code, message, options);
    this.name = 'TransportError';
    this.peer = options?.peer;
    this.remote = options?.remote;
  }
}

/** A protocol aborted because a peer cheated or misbehaved; see {@link ProtocolAbortCode}. */
export class ProtocolAbort extends WebmpcError {
  declare readonly code: ProtocolAbortCode;
  /**
   * The party the failed check proves deviated, or the peer whose message was malformed or whose
   * parameters differ; undefined when the check cannot tell which party deviated (most checks on
   * values several parties contributed to: the protocols give abort, not identifiable abort).
   */
  readonly peer: number | undefined;
  /**
   * The protocol phase the failed check belongs to, when the protocol names it (authgc:
   * `'setup'`, `'function-independent preprocessing'`, `'function-dependent preprocessing'`,
   * `'online'`).
   */
  readonly phase: string | undefined;
  /** Which check failed (or which message was malformed), when the protocol names it. */
  readonly check: string | undefined;

  constructor(code: ProtocolAbortCode, message: string, options?: { cause?: unknown; peer?: number }) {
    super(code, message, options);
    this.name = 'ProtocolAbort';
    this.peer = options?.peer;
    // The Wasm protocols attach `phase` and `check` to the error they throw (kept as the cause).
    const detail = options?.cause as { phase?: unknown; check?: unknown } | undefined;
    this.phase = typeof detail?.phase === 'string' ? detail.phase : undefined;
    this.check = typeof detail?.check === 'string' ? detail.check : undefined;
  }
}

/**
 * A teleport protocol's verdict about its enclave or a party's messages checked against it (see
 * the `ENCLAVE_*`, `EVIDENCE_REJECTED` and `SIMULATED_ENCLAVE_REFUSED` codes of
 * {@link ProtocolAbortCode}). Messages and fields name checks and codes, never a secret.
 */
export class EnclaveAbort extends ProtocolAbort {
  /** `ENCLAVE_CHECK_FAILED`: the check that failed (`gc-tau`, `rot-tau`, `enclave-x2-share-labels`, ...). */
  override readonly check: string | undefined;
  /** `ENCLAVE_CHECK_FAILED`: whom the failed check points at (`enclave`, `garbler`, `enclave or garbler`, `evaluator`). */
  readonly suspect: string | undefined;
  /** `EVIDENCE_REJECTED`: `measurement-mismatch`, `invalid` or `no-verifier`. */
  readonly reason: string | undefined;
  /** `ENCLAVE_FAILED`: the enclave's or its host's own code (e.g. `PEER_DISCONNECTED`, `ENCLAVE_PROGRAM_EXITED`). */
  readonly enclaveCode: string | undefined;

  constructor(
    code: ProtocolAbortCode,
    message: string,
    options?: { cause?: unknown; peer?: number; check?: string; suspect?: string; reason?: string; enclaveCode?: string },
  ) {
    super(code, message, options);
    this.name = 'EnclaveAbort';
    this.check = options?.check;
    this.suspect = options?.suspect;
    this.reason = options?.reason;
    this.enclaveCode = options?.enclaveCode;
  }
}

const ENCLAVE_ABORT_CODES: ReadonlySet<string> = new Set<ProtocolAbortCode>([
  'ENCLAVE_CHECK_FAILED',
  'EVIDENCE_REJECTED',
  'SIMULATED_ENCLAVE_REFUSED',
  'ENCLAVE_FAILED',
]);

/** The Wasm error's string field `key`, if it has one. */
function enclaveDetail(err: Error, key: string): { [k: string]: string } {
  const v = (err as unknown as Record<string, unknown>)[key];
  return typeof v === 'string' ? { [key]: v } : {};
}

const PROTOCOL_ABORT_CODES: ReadonlySet<string> = new Set<ProtocolAbortCode>([
  'CHEATING_DETECTED',
  'MALFORMED_MESSAGE',
  'PARAMETER_MISMATCH',
  'MAC_CHECK_FAILED',
  'SACRIFICE_FAILED',
]);

/**
 * Maps the `code` of an error thrown by a Rust protocol (`name = "ProtocolError"`) onto the SDK's
 * classes. Transport failures normally arrive as the transport's own error object (the Wasm
 * channel rethrows it); the codes handled here are the protocol's verdicts.
 */
function fromProtocolCode(code: unknown, err: Error): WebmpcError {
  const peer = (err as { peer?: unknown }).peer;
  const peerOption = typeof peer === 'number' ? { peer } : {};
  if (typeof code === 'string' && ENCLAVE_ABORT_CODES.has(code)) {
    return new EnclaveAbort(code as ProtocolAbortCode, err.message, {
      cause: err,
      ...peerOption,
      ...enclaveDetail(err, 'check'),
      ...enclaveDetail(err, 'suspect'),
      ...enclaveDetail(err, 'reason'),
      ...enclaveDetail(err, 'enclaveCode'),
    });
  }
  if (typeof code === 'string' && PROTOCOL_ABORT_CODES.has(code)) {
    return new ProtocolAbort(code as ProtocolAbortCode, err.message, { cause: err, ...peerOption });
  }
  switch (code) {
    case 'PEER_DISCONNECTED':
      return new TransportError('PEER_DISCONNECTED', err.message, { cause: err, ...peerOption });
    case 'TRANSPORT_FAILED':
      return new TransportError('PROTOCOL_ERROR', err.message, { cause: err, ...peerOption });
    case 'BUSY':
      return new WebmpcError('BUSY', err.message, { cause: err });
    case 'SESSION_FAILED':
      return new WebmpcError('SESSION_FAILED', err.message, { cause: err });
    case 'ENCLAVE_UNAVAILABLE':
      return new WebmpcError('ENCLAVE_UNAVAILABLE', err.message, { cause: err });
    case 'MALFORMED_PROGRAM':
    case 'PROGRAM_TOO_LARGE':
      return new WebmpcError(code, err.message, { cause: err });
    case 'ENTROPY_UNAVAILABLE':
      return new KernelError('ENTROPY_UNAVAILABLE', err.message, { cause: err });
    default:
      return new WebmpcError('INVALID_ARGUMENT', err.message, { cause: err });
  }
}

const CIRCUIT_CODES: ReadonlySet<string> = new Set<CircuitErrorCode>(['MALFORMED_CIRCUIT', 'CIRCUIT_TOO_LARGE', 'WRONG_INPUT_SIZE']);

export function isCircuitErrorCode(code: unknown): code is CircuitErrorCode {
  return typeof code === 'string' && CIRCUIT_CODES.has(code);
}

/**
 * A circuit was refused, or its inputs were. `line` (Bristol text, 1-based) or `offset` (binary
 * form, bytes) says where, when the error is about a place in the circuit. Messages carry
 * positions, wire numbers and sizes, never input values.
 */
export class CircuitError extends WebmpcError {
  declare readonly code: CircuitErrorCode;
  /** The Bristol line at fault, if the error came from parsing text. */
  readonly line: number | undefined;
  /** The byte offset at fault, if the error came from decoding the binary form. */
  readonly offset: number | undefined;

  constructor(
    code: CircuitErrorCode,
    message: string,
    options?: { cause?: unknown; line?: number | undefined; offset?: number | undefined },
  ) {
    super(code, message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CircuitError';
    this.line = options?.line;
    this.offset = options?.offset;
  }
}
