// encodeUint / decodeUint: the byte convention sessions take (big-endian, ceil(width/8) bytes),
// checked against BigInt arithmetic written independently here, the Bristol convention through
// the reference AES circuit, and every refusal.
import { describe, expect, it } from 'vitest';
import { WebmpcError, circuit, createMemoryTransports, decodeUint, encodeUint, init, session } from '../dist/index.js';

/** Big-endian bytes by repeated division, to compare with. */
function reference(v: bigint, bytes: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < bytes; i++) {
    out.unshift(Number(v % 256n));
    v /= 256n;
  }
  return out;
}

function code(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    return e instanceof WebmpcError ? e.code : `not a WebmpcError: ${String(e)}`;
  }
  return undefined;
}

describe('encodeUint / decodeUint', () => {
  it('round-trip random values of many widths, matching the reference layout', () => {
    for (const width of [1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 53, 63, 64, 65, 127, 128, 129, 255, 256, 1000]) {
      for (let k = 0; k < 20; k++) {
        // a random value below 2^width, including the extremes
        let v = 0n;
        for (let i = 0; i < width; i++) v = (v << 1n) | BigInt(Math.random() < 0.5 ? 1 : 0);
        if (k === 0) v = 0n;
        if (k === 1) v = (1n << BigInt(width)) - 1n;
        const bytes = encodeUint(v, width);
        expect(bytes.length).toBe(Math.ceil(width / 8));
        expect(Array.from(bytes)).toEqual(reference(v, Math.ceil(width / 8)));
        expect(decodeUint(bytes, width)).toBe(v);
        expect(decodeUint(bytes)).toBe(v);
      }
    }
  });

  it('take safe-integer numbers and bigints alike', () => {
    expect(Array.from(encodeUint(0x0102, 16))).toEqual([1, 2]);
    expect(Array.from(encodeUint(0x0102n, 16))).toEqual([1, 2]);
    expect(Array.from(encodeUint(Number.MAX_SAFE_INTEGER, 53))).toEqual(reference(BigInt(Number.MAX_SAFE_INTEGER), 7));
    expect(Array.from(encodeUint(5, 3))).toEqual([5]);
  });

  it('refuse what does not fit, without repeating the value', () => {
    const secret = 123_456_789;
    for (const [f, want] of [
      [() => encodeUint(256, 8), 'INVALID_ARGUMENT'],
      [() => encodeUint(8, 3), 'INVALID_ARGUMENT'],
      [() => encodeUint(-1, 8), 'INVALID_ARGUMENT'],
      [() => encodeUint(1.5, 8), 'INVALID_ARGUMENT'],
      [() => encodeUint(2 ** 60, 64), 'INVALID_ARGUMENT'],
      [() => encodeUint(Number.NaN, 8), 'INVALID_ARGUMENT'],
      [() => encodeUint('7' as unknown as number, 8), 'INVALID_ARGUMENT'],
      [() => encodeUint(1, 0), 'INVALID_ARGUMENT'],
      [() => encodeUint(1, 2.5), 'INVALID_ARGUMENT'],
      [() => decodeUint(new Uint8Array(2), 8), 'INVALID_ARGUMENT'],
      [() => decodeUint(Uint8Array.of(0x08), 3), 'INVALID_ARGUMENT'],
      [() => decodeUint(undefined), 'INVALID_ARGUMENT'],
      [() => decodeUint([1, 2] as unknown as Uint8Array), 'INVALID_ARGUMENT'],
    ] as const) {
      expect(code(f)).toBe(want);
    }
    try {
      encodeUint(secret, 16);
    } catch (e) {
      expect(String((e as Error).message)).not.toContain(String(secret));
      expect(String((e as Error).message)).not.toContain(secret.toString(16));
    }
  });

  it('are what a session takes and returns: x + y on 40 bits, and the FIPS-197 AES vector', async () => {
    await init();
    const b = new circuit.CircuitBuilder();
    b.output(b.input(0, 40).add(b.input(1, 40)));
    const x = 0xfe_dc_ba_98_76n;
    const y = 0x12_34_56_78_9an;
    const transports = createMemoryTransports(2);
    const sessions = await Promise.all(transports.map((transport, party) => session({ transport, party, parties: 2 })));
    try {
      const built = b.build();
      const outs = await Promise.all(
        sessions.map((s, party) => s.run(built, { inputs: [encodeUint(party === 0 ? x : y, 40)] })),
      );
      for (const [out] of outs) expect(decodeUint(out, 40)).toBe((x + y) % (1n << 40n));

      const aes = circuit.aes128Circuit();
      const key = 0x000102030405060708090a0b0c0d0e0fn;
      const pt = 0x00112233445566778899aabbccddeeffn;
      const [first] = await Promise.all(
        sessions.map((s, party) => s.run(aes, { inputs: [encodeUint(party === 0 ? key : pt, 128)] })),
      );
      expect(decodeUint(first![0], 128).toString(16)).toBe('69c4e0d86a7b0430d8cdb78070b4c55a');
    } finally {
      await Promise.all(sessions.map((s) => s.close()));
    }
  });
});
