// A guard, not a proof: the shipped module must not carry an AES lookup table. A table-driven AES
// (S-box or T-tables, indexed by secret bytes) leaks through cache timing; ours evaluates the
// S-box as a Boolean circuit. If a dependency or a change ever brings a table in, its bytes show
// up in the module's data and this fails. (The code itself was reviewed for secret-dependent
// branches and indices; see the notes in wasm/crates/core/src/aes/.)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DIST, unhex } from './helpers.js';

const TABLE_PREFIXES = {
  // First 16 entries of the AES S-box and of its inverse.
  sbox: unhex('637c777bf26b6fc53001672bfed7ab76'),
  inverseSbox: unhex('52096ad53036a538bf40a39e81f3d7fb'),
  // Te0[0..4] of the usual T-table implementation, as little- and big-endian 32-bit words.
  te0LittleEndian: unhex('a56363c6847c7cf8997777ee8d7b7bf6'),
  te0BigEndian: unhex('c66363a5f87c7c84ee777799f67b7b8d'),
};

describe('no AES lookup table in the shipped Wasm', () => {
  const wasm = readFileSync(join(DIST, 'wasm-gen', 'webmpc_bg.wasm'));

  for (const [name, bytes] of Object.entries(TABLE_PREFIXES)) {
    it(`has no ${name}`, () => {
      expect(wasm.indexOf(bytes)).toBe(-1);
    });
  }

  it('sees a table that is there (a planted copy)', () => {
    const planted = Buffer.concat([wasm, TABLE_PREFIXES.sbox]);
    expect(planted.indexOf(TABLE_PREFIXES.sbox)).toBe(wasm.length);
  });
});
