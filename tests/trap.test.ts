// What the SDK makes of a Wasm trap. The kernels should never trap (arguments are checked on both
// sides of the boundary), so the trap comes from a six-instruction module built here.
import { describe, expect, it } from 'vitest';
import { WebmpcError, aesFixedKeyEncrypt, init } from '../dist/index.js';
import { _callForTesting } from '../dist/kernels.js';
import { fromWasmError } from '../dist/errors.js';

// (module (func (export "f") unreachable))
const TRAPPING_MODULE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
  0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type section: () -> ()
  0x03, 0x02, 0x01, 0x00, // function section: one function of type 0
  0x07, 0x05, 0x01, 0x01, 0x66, 0x00, 0x00, // export section: "f" = func 0
  0x0a, 0x05, 0x01, 0x03, 0x00, 0x00, 0x0b, // code section: no locals, unreachable, end
]);

describe('traps', () => {
  it('a WebAssembly.RuntimeError becomes WebmpcError WASM_TRAP, keeping the cause', async () => {
    const { instance } = await WebAssembly.instantiate(TRAPPING_MODULE);
    let raw: unknown;
    try {
      (instance.exports.f as () => void)();
    } catch (err) {
      raw = err;
    }
    expect(raw).toBeInstanceOf(WebAssembly.RuntimeError);
    const converted = fromWasmError(raw) as WebmpcError;
    expect(converted).toBeInstanceOf(WebmpcError);
    expect(converted.code).toBe('WASM_TRAP');
    expect(converted.cause).toBe(raw);
  });

  it('anything else passes through unchanged', () => {
    const plain = new RangeError('x');
    expect(fromWasmError(plain)).toBe(plain);
    const notKernel = Object.assign(new Error('y'), { name: 'KernelError', code: 'SOMETHING_ELSE' });
    expect(fromWasmError(notKernel)).toBe(notKernel);
  });

  // Last in this file: it leaves the module refusing calls (test files run in separate workers).
  it('after a trap in a kernel call, every later call is refused with WASM_TRAP', async () => {
    await init();
    expect(aesFixedKeyEncrypt(new Uint8Array(16)).length).toBe(16);
    const { instance } = await WebAssembly.instantiate(TRAPPING_MODULE);
    const trap = () => _callForTesting(() => (instance.exports.f as () => void)());
    expect(trap).toThrow(expect.objectContaining({ code: 'WASM_TRAP' }));
    let later: unknown;
    try {
      aesFixedKeyEncrypt(new Uint8Array(16));
    } catch (err) {
      later = err;
    }
    expect(later).toBeInstanceOf(WebmpcError);
    expect((later as WebmpcError).code).toBe('WASM_TRAP');
    expect((later as WebmpcError).message).toMatch(/can no longer be trusted/);
  });
});
