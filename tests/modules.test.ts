// The per-protocol Wasm modules (ts/engine/modules.ts): not loaded until something needs them,
// loaded by init({ preload }), from init({ modules }) when given, with load errors that name the
// module's file and the option that overrides it, and a failed load that can be retried.
import { describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import * as webmpc from '../dist/index.js';
import { _moduleMemory, moduleWasm } from '../dist/engine/modules.js';

describe('per-protocol Wasm modules', () => {
  it('are not loaded by init(), refuse use before their load, load from init({ modules }) and init({ preload })', async () => {
    await webmpc.init();
    expect(_moduleMemory('mascot')).toBeUndefined();
    expect(_moduleMemory('teleport')).toBeUndefined();
    expect(() => moduleWasm('teleport')).toThrow(expect.objectContaining({ code: 'NOT_INITIALIZED' }));

    // A bad override: the error names the module's file and the option, and nothing is kept.
    const html = new TextEncoder().encode('<!doctype html><html></html>');
    const err = await webmpc.init({ modules: { teleport: html }, preload: ['teleport'] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(webmpc.WebmpcError);
    expect(err).toMatchObject({ code: 'WASM_LOAD_FAILED' });
    expect((err as Error).message).toContain('webmpc_teleport_bg.wasm');
    expect((err as Error).message).toContain('init({ modules: { teleport } })');
    expect((err as Error).message).toContain('got HTML');
    expect(_moduleMemory('teleport')).toBeUndefined();

    // Retried with the real bytes (as an app serving them from elsewhere would pass them).
    const bytes = await readFile(new URL('../dist/wasm-gen/webmpc_teleport_bg.wasm', import.meta.url));
    await webmpc.init({ modules: { teleport: bytes }, preload: ['teleport'] });
    expect(_moduleMemory('teleport')).toBeDefined();
    expect(typeof moduleWasm('teleport').teleportGarblerConnect).toBe('function');
    expect(_moduleMemory('mascot'), 'only what was asked for').toBeUndefined();

    // The default location (beside the main module, read from disk in Node).
    await webmpc.init({ preload: ['mascot'] });
    expect(typeof moduleWasm('mascot').mascotSetup).toBe('function');
    // Each module is an instance of its own.
    expect(_moduleMemory('mascot')).not.toBe(_moduleMemory('teleport'));
  });
});
