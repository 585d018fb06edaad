/**
 * Circuits: the TypeScript circuit builder and generators for standard functions.
 *
 * ```ts
 * import { CircuitBuilder, aes128Circuit } from 'webmpc/circuit';
 * ```
 */
export {
  Bit,
  Circuit,
  CircuitBuilder,
  IntValue,
  OP_AND,
  OP_CONST,
  OP_COPY,
  OP_INV,
  OP_XOR,
  SInt,
  UInt,
} from './builder.js';
export type { AnyIntValue, CircuitInput, Constant } from './builder.js';
export { aes128Circuit, aes128Encrypt, aesSbox } from './gen/aes128.js';
export type { Aes128CircuitOptions } from './gen/aes128.js';
export { sha256Circuit, sha256Compress, sha256InitialState } from './gen/sha256.js';
export { vickreyCircuit, vickreyClientsCircuit, winnerBits } from './gen/vickrey.js';
export type { VickreyCircuitOptions, VickreyClientsOptions } from './gen/vickrey.js';
export type { Sha256CircuitOptions } from './gen/sha256.js';
export {
  BinaryCircuit,
  CircuitError,
  evaluate,
  isCircuitErrorCode,
  parseBristol,
  type CircuitErrorCode,
  type CircuitStats,
  type HasBinaryForm,
} from './wasm.js';
