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
  | 'WASM_TRAP';

export type WebmpcErrorCode = KernelErrorCode | SdkErrorCode;

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
    if (typeof WebAssembly !== 'undefined' && err instanceof WebAssembly.RuntimeError) {
      return new WebmpcError('WASM_TRAP', `webmpc Wasm module trapped (${err.message}); this is a bug`, {
        cause: err,
      });
    }
  }
  return err;
}
