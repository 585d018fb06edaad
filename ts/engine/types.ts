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

export interface InitOptions {
  /**
   * Overrides where the module comes from: bytes, a compiled `WebAssembly.Module`, a URL, or a
   * `Response`. Useful when the `.wasm` file is served from elsewhere (a CDN, a strict CSP).
   * Ignored once the module is loaded.
   */
  wasm?: WasmSource;
}
