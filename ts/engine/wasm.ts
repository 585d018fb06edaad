/**
 * Loads the webmpc Wasm module once per JS realm, in Node and in browsers, without a bundler.
 *
 * The wasm-bindgen `web` target fetches its `.wasm` with `fetch(new URL(..., import.meta.url))`.
 * Node's fetch cannot read `file:` URLs, so in Node the bytes are read from disk instead; the
 * `node:` import is dynamic and only reached in that branch so browsers never see it.
 */
import initBindings, * as bindings from '../wasm-gen/webmpc.js';
import { WebmpcError, fromWasmError } from '../errors.js';
import type { InitOptions, WasmSource } from './types.js';

export type { InitOptions, WasmSource };

/** The raw wasm-bindgen exports. Use the wrappers in `kernels.ts`, which check arguments. */
export type Bindings = typeof bindings;

let loaded: Bindings | undefined;
let loading: Promise<Bindings> | undefined;
let memory: WebAssembly.Memory | undefined;
// Set by the first trap. A trapped instance can be left inconsistent (a shadow-stack pointer
// never restored, a Rust object still marked borrowed), and wasm-bindgen's glue holds a single
// instance that cannot be re-created in place, so every later call is refused instead.
let trapped: WebmpcError | undefined;

function isNode(): boolean {
  const proc = (globalThis as { process?: { versions?: { node?: unknown } } }).process;
  return typeof proc?.versions?.node === 'string';
}

async function resolveSource(source: WasmSource | undefined): Promise<Parameters<typeof initBindings>[0]> {
  // Written with a literal path so bundlers that understand `new URL(lit, import.meta.url)` (Vite,
  // webpack 5, esbuild with a plugin) copy the file into the build output.
  const url = source ?? new URL('../wasm-gen/webmpc_bg.wasm', import.meta.url);
  const asUrl = url instanceof URL ? url : typeof url === 'string' ? tryUrl(url) : undefined;
  if (isNode() && asUrl?.protocol === 'file:') {
    // Hidden from bundlers (a variable specifier plus their ignore comments): a browser build
    // would otherwise warn about, or try to polyfill, a module this branch never reaches there.
    const specifier = 'node:fs/promises';
    const fs = (await import(/* webpackIgnore: true */ /* @vite-ignore */ specifier)) as typeof import('node:fs/promises');
    return { module_or_path: await fs.readFile(asUrl) };
  }
  return { module_or_path: url };
}

function tryUrl(s: string): URL | undefined {
  try {
    return new URL(s, import.meta.url);
  } catch {
    return undefined;
  }
}

/**
 * Loads and instantiates the Wasm module. Safe to call many times and concurrently: every call
 * returns the same promise. A failed load is forgotten, so a later call can try again.
 */
export function loadWasm(options: InitOptions = {}): Promise<Bindings> {
  if (loaded) return Promise.resolve(loaded);
  if (!loading) {
    loading = (async () => {
      try {
        memory = (await initBindings(await resolveSource(options.wasm))).memory;
      } catch (err) {
        throw new WebmpcError(
          'WASM_LOAD_FAILED',
          `webmpc: could not load the Wasm module: ${err instanceof Error ? err.message : String(err)}`,
          { cause: err },
        );
      }
      loaded = bindings;
      return bindings;
    })();
    loading.catch(() => {
      loading = undefined;
    });
  }
  return loading;
}

/** True once {@link loadWasm} has resolved. */
export function isLoaded(): boolean {
  return loaded !== undefined;
}

/** Records that the module trapped; from now on {@link wasm} refuses to hand it out. */
export function markTrapped(trap: WebmpcError): void {
  trapped ??= trap;
}

/** The loaded bindings, for synchronous kernel calls. */
export function wasm(): Bindings {
  if (trapped) {
    throw new WebmpcError(
      'WASM_TRAP',
      'webmpc: an earlier call trapped, so this Wasm instance can no longer be trusted; reload the page or restart the process',
      { cause: trapped },
    );
  }
  if (!loaded) {
    throw new WebmpcError('NOT_INITIALIZED', 'webmpc: call and await init() before using the kernels');
  }
  return loaded;
}

/**
 * Current size of the module's linear memory in bytes (it only ever grows). Lets tests check
 * that chunking keeps it bounded.
 * @internal
 */
export function _wasmMemoryBytes(): number {
  return memory?.buffer.byteLength ?? 0;
}

/**
 * Runs `f` against the bindings the way every SDK call into Wasm runs: errors thrown by Wasm
 * become the SDK's typed errors, and a trap poisons the module so later calls are refused.
 */
export function callWasm<T>(f: (w: Bindings) => T): T {
  const w = wasm();
  try {
    return f(w);
  } catch (err) {
    const e = fromWasmError(err);
    if (e instanceof WebmpcError && e.code === 'WASM_TRAP') markTrapped(e);
    throw e;
  }
}
