/**
 * The error class of the circuit layer. It lives in `ts/errors.ts` with the SDK's other error
 * classes (so `fromWasmError` can build it without a circular import); this module re-exports it
 * for `webmpc/circuit` users.
 */
export { CircuitError, isCircuitErrorCode, type CircuitErrorCode } from '../errors.js';
