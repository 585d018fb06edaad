/**
 * The protocol registry: every protocol `Session.run` can dispatch to, by name.
 *
 * | name     | parties | computes on | security                                                    |
 * |----------|---------|-------------|-------------------------------------------------------------|
 * | `yao2pc` | 2       | circuits    | semi-honest: tables unchecked, evaluator picks garbler's outputs |
 * | `authgc` | 2–32    | circuits    | malicious, any n−1 corrupted, with (possibly non-unanimous) abort |
 * | `plain`  | 2+      | circuits    | none: inputs sent in the clear (debugging, reference)       |
 * | `mascot` | 2+      | programs    | malicious with abort, n − 1 corrupt                         |
 * | `teleport-yao` | 2 | circuits    | semi-honest or malicious (abort), with a semi-trusted enclave beside the evaluator |
 *
 * To add a protocol, write `./<name>.ts` exporting a {@link ProtocolModule} (see `./types.ts`)
 * and add one entry below. Its run options (`garbler`, ...) and preprocessing options become
 * part of `Session.run`/`Session.preprocess`'s types through {@link RoleOptionsOf} and
 * {@link PreprocessOptionsOf}.
 */
import { authgc } from './authgc.js';
import { mascot } from './mascot.js';
import { plain } from './plain.js';
import { teleportYao } from './teleport-yao.js';
import type { ProtocolModule, TypesOf } from './types.js';
import { yao2pc } from './yao2pc.js';

/** Every protocol, by the name `Session.run` takes. */
export const protocols = {
  yao2pc,
  authgc,
  plain,
  mascot,
  'teleport-yao': teleportYao,
} as const;

/** The name of a protocol in the registry. */
export type Protocol = keyof typeof protocols;

/** The extra `Session.run` options protocol `P` accepts (e.g. `{ garbler?: number }`). */
export type RoleOptionsOf<P extends Protocol> = P extends Protocol ? TypesOf<(typeof protocols)[P]>['roleOptions'] : never;

/** The `Session.preprocess` options of protocol `P`. */
export type PreprocessOptionsOf<P extends Protocol> = P extends Protocol ? TypesOf<(typeof protocols)[P]>['preprocessOptions'] : never;

/**
 * The protocols this package ships, as the registry held them when it loaded: the ones an engine
 * worker (which loads its own copy of the registry) can run. A module an app adds to
 * {@link protocols} at run time exists only on its own thread, so sessions run it there.
 */
const SHIPPED: ReadonlySet<string> = new Set(Object.keys(protocols));

/** Whether protocol `name` can run in an engine worker (see {@link SHIPPED}). */
export function runsInWorker(name: string): boolean {
  return SHIPPED.has(name) && protocolModule(name)?.worker !== false;
}

/** The module registered under `name`, or undefined. */
export function protocolModule(name: unknown): ProtocolModule | undefined {
  if (typeof name !== 'string' || !Object.hasOwn(protocols, name)) return undefined;
  // Each entry is a ProtocolModule<itsTypes>; the session drives every one through the base type.
  return protocols[name as Protocol] as unknown as ProtocolModule;
}

export type * from './types.js';
