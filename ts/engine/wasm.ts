/**
 * Loads the webmpc main Wasm module once per JS realm, in Node and in browsers, without a bundler
 * (the per-protocol modules are loaded on first use by `modules.ts`, with the same helpers).
 *
 * The wasm-bindgen `web` target fetches its `.wasm` with `fetch(new URL(..., import.meta.url))`.
 * Node's fetch cannot read `file:` URLs, so in Node the bytes are read from disk instead; the
 * `node:` import is dynamic and only reached in that branch so browsers never see it.
 */
import * as bindings from '../wasm-gen/webmpc.js';
import { WebmpcError, fromWasmError } from '../errors.js';
import { setModuleSources } from './modules.js';
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

export function isNode(): boolean {
  const proc = (globalThis as { process?: { versions?: { node?: unknown } } }).process;
  return typeof proc?.versions?.node === 'string';
}

/** What a load is about: the file's name and where its override goes, for error messages. */
export interface LoadTarget {
  /** The module's file, e.g. `webmpc_bg.wasm`. */
  readonly file: string;
  /** The option that overrides its location, e.g. `init({ wasm })`. */
  readonly option: string;
}

const MAIN: LoadTarget = { file: 'webmpc_bg.wasm', option: 'init({ wasm })' };

/**
 * The argument for a wasm-bindgen init function: `source` if given, else `fallback` (the module's
 * default URL beside this file). In Node, `file:` URLs are read from disk; elsewhere URLs are
 * fetched with checks that turn deployment mistakes into errors that say what happened.
 */
export async function resolveSource(
  source: WasmSource | undefined,
  fallback: () => URL,
  target: LoadTarget = MAIN,
): Promise<{ module_or_path: never }> {
  const url = source ?? fallback();
  const asUrl = url instanceof URL ? url : typeof url === 'string' ? tryUrl(url) : undefined;
  if (isNode() && asUrl?.protocol === 'file:') {
    // Hidden from bundlers (a variable specifier plus their ignore comments): a browser build
    // would otherwise warn about, or try to polyfill, a module this branch never reaches there.
    const specifier = 'node:fs/promises';
    const fs = (await import(/* webpackIgnore: true */ /* @vite-ignore */ specifier)) as typeof import('node:fs/promises');
    let bytes: Uint8Array;
    try {
      bytes = await fs.readFile(asUrl);
    } catch (err) {
      throw loadFailed(target, `cannot read ${asUrl.pathname} (${(err as { code?: string }).code ?? 'unreadable'})`, err);
    }
    return { module_or_path: checkedBytes(target, bytes, asUrl.href) as never };
  }
  if (asUrl && typeof fetch === 'function') return { module_or_path: (await fetchWasm(target, asUrl)) as never };
  if (url instanceof ArrayBuffer || ArrayBuffer.isView(url)) {
    const view = url instanceof ArrayBuffer ? new Uint8Array(url) : new Uint8Array(url.buffer, url.byteOffset, url.byteLength);
    return { module_or_path: checkedBytes(target, view, `the bytes given to ${target.option}`) as never };
  }
  return { module_or_path: url as never };
}

function hint(target: LoadTarget): string {
  return `see ${target.option} to give the module's location or bytes`;
}

/** The load error for `target`. */
export function loadFailed(target: LoadTarget, message: string, cause?: unknown): WebmpcError {
  const which = target === MAIN ? 'the Wasm module' : `the Wasm module ${target.file}`;
  return new WebmpcError('WASM_LOAD_FAILED', `webmpc: could not load ${which}: ${message}`, { cause });
}

/** `bytes` if they start like a Wasm module, else a load error that says what came instead. */
function checkedBytes(target: LoadTarget, bytes: Uint8Array, from: string, contentType: string | null = null): Uint8Array {
  if (bytes.length >= 4 && bytes[0] === 0 && bytes[1] === 0x61 && bytes[2] === 0x73 && bytes[3] === 0x6d) return bytes;
  const head = new TextDecoder().decode(bytes.subarray(0, 64)).trimStart().toLowerCase();
  const type = contentType?.split(';')[0]?.trim();
  const html = head.startsWith('<!doctype html') || head.startsWith('<html') || type === 'text/html';
  if (html) throw loadFailed(target, `got HTML, not Wasm, from ${from} — ${hint(target)}`);
  if (type && type !== 'application/octet-stream') throw loadFailed(target, `got ${type}, not Wasm, from ${from} — ${hint(target)}`);
  throw loadFailed(target, `${bytes.length === 0 ? 'empty' : 'not a Wasm module (no \\0asm header)'}: ${from} — ${hint(target)}`);
}

/**
 * Fetches the module, turning the usual deployment mistakes into errors that say what happened:
 * an HTTP error, or an HTML page (a dev server or an app's catch-all route answering for a file it
 * does not have). A response served as `application/wasm` is compiled while it streams.
 */
async function fetchWasm(target: LoadTarget, url: URL): Promise<Response | Uint8Array> {
  let res: Response;
  try {
    res = await fetch(url);
  } catch (err) {
    throw loadFailed(target, `fetching ${url.href} failed (${err instanceof Error ? err.message : String(err)}) — ${hint(target)}`, err);
  }
  if (!res.ok) throw loadFailed(target, `HTTP ${res.status} from ${url.href} — ${hint(target)}`);
  const type = res.headers.get('content-type');
  if (type?.split(';')[0]?.trim() === 'application/wasm') return res;
  return checkedBytes(target, new Uint8Array(await res.arrayBuffer()), url.href, type);
}

function tryUrl(s: string): URL | undefined {
  try {
    return new URL(s, import.meta.url);
  } catch {
    return undefined;
  }
}

/** The Wasm modules by name: the main one and the per-protocol ones (`modules.ts`). */
export type WasmModuleName = 'main' | import('./types.js').ProtocolModuleName;

/**
 * Compiled modules, kept so that workers instantiate the same code without fetching or compiling
 * it again (a `WebAssembly.Module` crosses to a worker by `postMessage`).
 */
const compiled = new Map<WasmModuleName, WebAssembly.Module>();

/** The compiled module `name`, if it has been compiled in this realm. */
export function compiledModule(name: WasmModuleName): WebAssembly.Module | undefined {
  return compiled.get(name);
}

/**
 * Compiles what {@link resolveSource} resolved to (bytes, a `Response`, a compiled module) and
 * remembers it under `name`. A `Response` served as `application/wasm` compiles as it streams.
 */
export async function compileResolved(
  name: WasmModuleName,
  target: LoadTarget,
  resolved: { module_or_path: never },
): Promise<WebAssembly.Module> {
  const have = compiled.get(name);
  if (have) return have;
  const x = (await (resolved.module_or_path as unknown)) as unknown;
  let module: WebAssembly.Module;
  try {
    // Bytes before `Response`: in Node, touching the `Response` global loads undici (see
    // instantiateCompiled), and Node's bytes come from disk.
    if (x instanceof WebAssembly.Module) module = x;
    else if (x instanceof Uint8Array) module = await WebAssembly.compile(x as Uint8Array<ArrayBuffer>);
    else if (x instanceof ArrayBuffer) module = await WebAssembly.compile(x);
    else if (typeof Response !== 'undefined' && x instanceof Response) {
      module =
        typeof WebAssembly.compileStreaming === 'function' && x.headers.get('content-type')?.split(';')[0]?.trim() === 'application/wasm'
          ? await WebAssembly.compileStreaming(x)
          : await WebAssembly.compile(await x.arrayBuffer());
    } else throw new TypeError('not bytes, a Response or a WebAssembly.Module');
  } catch (err) {
    throw loadFailed(target, `compiling failed (${err instanceof Error ? err.message : String(err)}) — ${hint(target)}`, err);
  }
  compiled.set(name, module);
  return module;
}

/** What a wasm-bindgen `web`-target glue module exports for instantiating it. */
export interface BindgenGlue {
  default(init: { module_or_path: WebAssembly.Module }): Promise<{ memory: WebAssembly.Memory }>;
  initSync(init: { module: WebAssembly.Module }): { memory: WebAssembly.Memory };
}

/**
 * Instantiates a compiled module through its wasm-bindgen glue. In Node, synchronously: the
 * glue's async path first asks `typeof Request` and `typeof Response`, and in Node those globals
 * are lazy getters that load the whole fetch implementation (undici) on first touch — measured
 * 30–160 ms per thread on the 2-core test VM (more under load), paid again in every engine
 * worker, on the way to its first operation. Browsers keep the async path (their main threads
 * may refuse large synchronous Wasm work, and their `Response` costs nothing).
 */
export async function instantiateCompiled(glue: BindgenGlue, module: WebAssembly.Module): Promise<WebAssembly.Memory> {
  if (isNode()) return glue.initSync({ module }).memory;
  return (await glue.default({ module_or_path: module })).memory;
}

/**
 * Loads and instantiates the Wasm module. Safe to call many times and concurrently: every call
 * returns the same promise. A failed load is forgotten, so a later call can try again.
 */
export function loadWasm(options: InitOptions = {}): Promise<Bindings> {
  if (options.modules) setModuleSources(options.modules);
  if (loaded) return Promise.resolve(loaded);
  if (!loading) {
    loading = (async () => {
      try {
        // Written with a literal path so bundlers that understand `new URL(lit, import.meta.url)`
        // (Vite, webpack 5, esbuild with a plugin) copy the file into the build output.
        const source = await resolveSource(options.wasm, () => new URL('../wasm-gen/webmpc_bg.wasm', import.meta.url));
        const module = await compileResolved('main', MAIN, source);
        memory = await instantiateCompiled(bindings as unknown as BindgenGlue, module);
      } catch (err) {
        if (err instanceof WebmpcError) throw err;
        throw loadFailed(MAIN, err instanceof Error ? err.message : String(err), err);
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
 * that chunking keeps it bounded. Not exported from any of the package's entry points.
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
