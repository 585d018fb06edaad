/**
 * The SDK, loaded on first use: `webmpc signal --help` and the like never instantiate the Wasm.
 */
export type Sdk = typeof import('../index.js');

/** The SDK with its main Wasm module loaded. */
export async function loadSdk(): Promise<Sdk> {
  const sdk = await import('../index.js');
  await sdk.init();
  return sdk;
}
