// Kept apart from wasm.ts so the package's public declarations never pull in the generated
// wasm-bindgen declarations, which need newer `lib` settings (Symbol.dispose) than many apps use.

// Looked up on globalThis rather than named directly: a Node project compiled without the DOM lib
// has no `WebAssembly` or `BufferSource` types, and naming them would break its type check.
type Global = typeof globalThis;
type GlobalInstance<K extends string> = Global extends { [P in K]: { prototype: infer T } } ? T : never;
type WasmModule = Global extends { WebAssembly: { Module: { prototype: infer M } } } ? M : never;

/** Where to take the Wasm module from, when the default location next to the package won't do. */
export type WasmSource =
  | ArrayBuffer
  | ArrayBufferView
  | string
  | GlobalInstance<'URL'>
  | GlobalInstance<'Response'>
  | Promise<GlobalInstance<'Response'>>
  | WasmModule;

/**
 * The Wasm modules loaded on first use of their protocols, apart from the main one:
 * `mascot` (`webmpc_mascot_bg.wasm`: the `mascot` protocol) and `teleport`
 * (`webmpc_teleport_bg.wasm`: `teleport-yao`, teleported OT, the enclave client).
 */
export type ProtocolModuleName = 'mascot' | 'teleport';

export interface InitOptions {
  /**
   * Overrides where the main module (`webmpc_bg.wasm`) comes from: bytes, a compiled
   * `WebAssembly.Module`, a URL, or a `Response`. Useful when the `.wasm` file is served from
   * elsewhere (a CDN, a strict CSP). Ignored once the module is loaded.
   */
  wasm?: WasmSource;
  /**
   * The same, for the modules the SDK loads on first use of a protocol that needs them, by name:
   * `{ mascot: url }` for `webmpc_mascot_bg.wasm`, `{ teleport: url }` for `webmpc_teleport_bg.wasm`. A module without an entry is taken from
   * beside the main one (`new URL(..., import.meta.url)`, which bundlers copy into the build;
   * Node reads it from disk). Takes effect for modules not loaded yet.
   */
  modules?: { readonly [N in ProtocolModuleName]?: WasmSource };
  /**
   * Modules to load now, with the main one, instead of on first use: to fail at start-up rather
   * than mid-session on a deployment mistake, or to take the download off the first run's path.
   */
  preload?: readonly ProtocolModuleName[];
}
