// How the SDK classifies the codes a Rust protocol throws (as `Error`s named `ProtocolError`).
import { describe, expect, it } from 'vitest';
import { ProtocolAbort, WebmpcError } from '../dist/index.js';
import { fromWasmError } from '../dist/errors.js';

const protocolError = (code: string) => Object.assign(new Error(`failed: ${code}`), { name: 'ProtocolError', code });

describe('protocol error codes', () => {
  it('a party that failed earlier is SESSION_FAILED, not BUSY (retrying cannot help)', () => {
    const raw = protocolError('SESSION_FAILED');
    const e = fromWasmError(raw) as WebmpcError;
    expect(e).toBeInstanceOf(WebmpcError);
    expect(e).not.toBeInstanceOf(ProtocolAbort);
    expect(e.code).toBe('SESSION_FAILED');
    expect(e.cause).toBe(raw);
    expect((fromWasmError(protocolError('BUSY')) as WebmpcError).code).toBe('BUSY');
  });

  it('a failed MAC check stays a ProtocolAbort', () => {
    const e = fromWasmError(protocolError('MAC_CHECK_FAILED'));
    expect(e).toBeInstanceOf(ProtocolAbort);
    expect((e as ProtocolAbort).code).toBe('MAC_CHECK_FAILED');
  });
});
