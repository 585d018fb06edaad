/**
 * The per-protocol Wasm modules, loaded on first use so an app downloads only what it runs. The
 * main module (`webmpc_bg.wasm`, loaded by `init()`) holds the kernels, OT, circuits, `yao2pc`
 * and `authgc`; the others hold one protocol family each:
 *
 * | name       | file                       | used by                                          |
 * |------------|----------------------------|--------------------------------------------------|
 * | `mascot`   | `webmpc_mascot_bg.wasm`    | `mascot` (programs: `webmpc/program`)             |
 * | `teleport` | `webmpc_teleport_bg.wasm`  | `teleport-yao`, teleported OT, the enclave client |
 *
 * Each is its own Wasm instance with its own linear memory (and its own copy of the stack scrub
 * and zero-on-free allocator, `webmpc-bindings-glue`), so Rust objects never cross between
 * modules: what a protocol needs from the main module crosses as bytes (a circuit's binary form,
 * a program's encoding) and is parsed again inside. (Program validation, which `webmpc/program`
 * needs synchronously, stays in the main module.) Where a module comes from: `init({ modules: { name: source } })`,
 * else beside this file, like the main module (Node reads it from disk; bundlers copy the file
 * because each default location is written as a literal `new URL(..., import.meta.url)`).
 */
import { WebmpcError, fromWasmError } from '../errors.js';
import type { ProtocolModuleName, WasmSource } from './types.js';
import { compileResolved, compiledModule, instantiateCompiled, loadFailed, resolveSource, type BindgenGlue, type LoadTarget } from './wasm.js';

type MascotGlue = typeof import('../wasm-gen/webmpc_mascot.js');
type TeleportGlue = typeof import('../wasm-gen/webmpc_teleport.js');

/** The raw wasm-bindgen exports of each module. */
export interface ModuleBindings {
  mascot: MascotGlue;
  teleport: TeleportGlue;
}

interface Entry<N extends ProtocolModuleName> {
  readonly target: LoadTarget;
  /** The wasm-bindgen glue, imported only when the module is first needed. */
  glue(): Promise<ModuleBindings[N]>;
  /** The default location, beside the package's other Wasm. */
  url(): URL;
}

const ENTRIES: { readonly [N in ProtocolModuleName]: Entry<N> } = {
  mascot: {
    target: { file: 'webmpc_mascot_bg.wasm', option: 'init({ modules: { mascot } })' },
    glue: () => import('../wasm-gen/webmpc_mascot.js'),
    url: () => new URL('../wasm-gen/webmpc_mascot_bg.wasm', import.meta.url),
  },
  teleport: {
    target: { file: 'webmpc_teleport_bg.wasm', option: 'init({ modules: { teleport } })' },
    glue: () => import('../wasm-gen/webmpc_teleport.js'),
    url: () => new URL('../wasm-gen/webmpc_teleport_bg.wasm', import.meta.url),
  },
};

interface State<N extends ProtocolModuleName> {
  loaded?: ModuleBindings[N];
  loading?: Promise<ModuleBindings[N]> | undefined;
  memory?: WebAssembly.Memory;
  /** Set by the module's first trap: its instance cannot be trusted any more (see wasm.ts). */
  trapped?: WebmpcError;
}

const states: { [N in ProtocolModuleName]: State<N> } = { mascot: {}, teleport: {} };
let sources: { readonly [N in ProtocolModuleName]?: WasmSource } = {};

/** Records `init({ modules })`'s overrides, for the modules not loaded yet. */
export function setModuleSources(given: { readonly [N in ProtocolModuleName]?: WasmSource }): void {
  sources = { ...sources, ...given };
}

/**
 * Loads module `name` (once; concurrent calls share the promise, a failed load is forgotten so a
 * later call can try again). Throws `WASM_LOAD_FAILED` naming the file and its override option.
 */
export function loadModule<N extends ProtocolModuleName>(name: N): Promise<ModuleBindings[N]> {
  const state = states[name] as State<N>;
  if (state.loaded) return Promise.resolve(state.loaded);
  if (!state.loading) {
    const entry = ENTRIES[name] as Entry<N>;
    state.loading = (async () => {
      try {
        const glue = await entry.glue();
        const module = await compileModule(name);
        state.memory = await instantiateCompiled(glue as unknown as BindgenGlue, module);
      } catch (err) {
        if (err instanceof WebmpcError) throw err;
        throw loadFailed(entry.target, err instanceof Error ? err.message : String(err), err);
      }
      state.loaded = (await entry.glue()) as ModuleBindings[N];
      return state.loaded;
    })();
    state.loading.catch(() => {
      state.loading = undefined;
    });
  }
  return state.loading;
}

/**
 * Module `name` compiled but not instantiated (fetched or read once, from where `init` says): what
 * a session hands its worker, which instantiates it there. Throws `WASM_LOAD_FAILED` like
 * {@link loadModule}.
 */
export async function compileModule(name: ProtocolModuleName): Promise<WebAssembly.Module> {
  const have = compiledModule(name);
  if (have) return have;
  const entry = ENTRIES[name];
  try {
    return await compileResolved(name, entry.target, await resolveSource(sources[name], entry.url, entry.target));
  } catch (err) {
    if (err instanceof WebmpcError) throw err;
    throw loadFailed(entry.target, err instanceof Error ? err.message : String(err), err);
  }
}

/** Module `name`'s bindings, once {@link loadModule} resolved; refused after a trap. */
export function moduleWasm<N extends ProtocolModuleName>(name: N): ModuleBindings[N] {
  const state = states[name] as State<N>;
  if (state.trapped) {
    throw new WebmpcError(
      'WASM_TRAP',
      `webmpc: an earlier call into ${ENTRIES[name].target.file} trapped, so its Wasm instance can no longer be trusted; reload the page or restart the process`,
      { cause: state.trapped },
    );
  }
  if (!state.loaded) {
    throw new WebmpcError('NOT_INITIALIZED', `webmpc: ${ENTRIES[name].target.file} is not loaded yet (loadModule first)`);
  }
  return state.loaded;
}

/** Runs `f` against module `name` the way {@link callWasm} does for the main one. */
export function callModule<N extends ProtocolModuleName, T>(name: N, f: (w: ModuleBindings[N]) => T): T {
  const w = moduleWasm(name);
  try {
    return f(w);
  } catch (err) {
    throw noteTrap(name, err);
  }
}

/** `err` as the SDK's typed error; a trap also poisons module `name`. */
export function noteTrap(name: ProtocolModuleName, err: unknown): unknown {
  const e = fromWasmError(err);
  if (e instanceof WebmpcError && e.code === 'WASM_TRAP') states[name].trapped ??= e;
  return e;
}

/**
 * Module `name`'s linear memory (undefined before it is loaded), for the tests that scan it for
 * secrets left behind. Not exported from any of the package's entry points.
 */
export function _moduleMemory(name: ProtocolModuleName): WebAssembly.Memory | undefined {
  return states[name].memory;
}
