/**
 * webmpc: secure multi-party computation for browsers and Node.js.
 *
 * ```js
 * import { init, aesEncrypt } from 'webmpc';
 * await init();
 * const ct = aesEncrypt(key, blocks);
 * ```
 *
 * Every kernel is synchronous and needs `await init()` (or `await ready()`) to have resolved once.
 */
import { compiledModule, loadWasm, isLoaded } from './engine/wasm.js';
import { loadModule } from './engine/modules.js';
import { prestartEngineWorker } from './engine/worker-host.js';
import { WebmpcError } from './errors.js';
import type { InitOptions, ProtocolModuleName, WasmSource } from './engine/types.js';

export type { InitOptions, ProtocolModuleName, WasmSource };

/**
 * Loads the main Wasm module (and the modules `options.preload` names). Idempotent: later calls
 * return once the same loads are done. The per-protocol modules (`teleport`) are otherwise loaded
 * on first use of their protocols; `options.modules` says where they come from.
 */
export async function init(options?: InitOptions): Promise<void> {
  await loadWasm(options);
  if (options?.preload) await Promise.all(options.preload.map((name) => loadModule(name)));
}

/** Alias of {@link init}, for code that reads better as "wait until ready". */
export const ready = init;

/** True once {@link init} has resolved and the kernels can be called. */
export function isReady(): boolean {
  return isLoaded();
}

/**
 * Starts an engine worker now, for the next session this page or process opens in worker mode
 * (the default), so that the worker's start-up (a new JS realm, the SDK's modules, instantiating
 * the Wasm: tens of milliseconds on a fast machine, hundreds on a loaded one) overlaps what comes
 * before that session, such as connecting to the other parties and the key exchange, instead of
 * delaying its first operation. Needs {@link init} to have resolved (`NOT_INITIALIZED` otherwise).
 * At most one worker waits: a call while one waits does nothing. A waiting worker does not keep
 * a Node process alive, and one that failed to start is replaced by the session's own.
 */
export function prestartWorker(): void {
  const main = compiledModule('main');
  if (!main) throw new WebmpcError('NOT_INITIALIZED', 'webmpc: call and await init() before prestartWorker()');
  prestartEngineWorker(main);
}

export {
  BLOCK_BYTES,
  aesEncrypt,
  aesFixedKeyEncrypt,
  backendName,
  fixedKey,
  gf128InnerProduct,
  gf128Mul,
  hashCcr,
  hashCr,
  hashTccr,
  hashTccrCounter,
  Prg,
  randomBytes,
  sigma,
  transpose128xN,
  transposeNx128,
} from './kernels.js';

export {
  CircuitError,
  EnclaveAbort,
  KernelError,
  ProtocolAbort,
  TransportError,
  WebmpcError,
  type CircuitErrorCode,
  type KernelErrorCode,
  type ProtocolAbortCode,
  type SdkErrorCode,
  type TransportErrorCode,
  type WebmpcErrorCode,
} from './errors.js';

export {
  MAX_OTS_PER_CALL,
  MAX_OT_THREADS,
  OT_MESSAGE_BYTES,
  OtReceiver,
  OtSender,
  otReceiver,
  otSender,
  type OtOptions,
  type OtSenderOptions,
} from './ot.js';

export {
  TeleportOtReceiver,
  TeleportOtSender,
  teleportedRandomOt,
  teleportOtReceiver,
  teleportOtSender,
  type EnclaveOptions,
  type EnclavePolicy,
  type TeleportMode,
  type TeleportOtOptions,
  type TeleportedRandomOtOptions,
} from './teleport-ot.js';

export {
  MAX_RUNS,
  Session,
  session,
  type BaseRunOptions,
  type CommonOptions,
  type Computable,
  type Phase,
  type PreprocessOptions,
  type ProgramSource,
  type Progress,
  type Protocol,
  type RunManyOptions,
  type RunOptions,
  type SecurityModel,
  type SessionOptions,
  type Traffic,
  type TrafficCounts,
} from './session.js';
export { MAX_UINT_WIDTH, decodeUint, encodeUint } from './encoding.js';
export { PreparedCircuit, prepareCircuit, type BuiltCircuit, type CircuitSource, type StreamedCircuit } from './circuit/source.js';
// The circuit builder and generators (`webmpc.circuit.CircuitBuilder`, `aes128Circuit`, ...): a
// namespace, because `Circuit`, `Bit` and `UInt` are generic names.
export * as circuit from './circuit/index.js';
// The arithmetic program builder for the `mascot` protocol (`webmpc.program.ProgramBuilder`,
// `vickreyAuction`, ...), also the `webmpc/program` entry.
export * as program from './program/index.js';

// The browser-safe transports. Node-only parts (signaling server, WebSocket mesh, the Node WebRTC
// library) are in the `webmpc/net/node` entry, and libsodium channels in `webmpc/secure`, so
// that a page importing `webmpc` pulls in neither.
export * as net from './net/index.js';
export { createMemoryTransports, type MemoryTransportOptions } from './net/memory.js';
export type { RecvOptions, Transport } from './net/transport.js';
