/**
 * Arithmetic programs for the `mascot` protocol: the builder, the program object with its value
 * encodings, loading programs from bytes, and the Vickrey auction.
 *
 * ```ts
 * import { ProgramBuilder, vickreyAuction } from 'webmpc/program';
 * const b = new ProgramBuilder({ parties: 2 });
 * const x = b.uint(0, 32), y = b.uint(1, 32);
 * b.output(x.lt(y));
 * const program = await b.build();
 * const out = await s.run(program, { protocol: 'mascot', inputs: program.encodeInputs(party, [myValue]) });
 * const [less] = program.decodeOutputs(out);   // 0n or 1n
 * ```
 */
export { ProgramBuilder, Value, type CompareOptions, type Operand, type OutputOptions, type ProgramBuilderOptions, type Range } from './builder.js';
export {
  CLIENT_OWNER,
  MAX_INT_BITS,
  MAX_OUTPUTS,
  MAX_PARTIES,
  MAX_VALUES,
  PRIME,
  type FieldName,
  type InputKind,
  type OutputKind,
} from './format.js';
export { Program, isProgram, programFromBytes, type Requirements } from './program.js';
export { vickreyAuction, vickreyBuilder, vickreyReference, type VickreyOptions, type VickreyResult } from './vickrey.js';
