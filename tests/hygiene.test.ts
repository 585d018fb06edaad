// Secrets must not outlive the call that used them in Wasm linear memory, which lives as long as
// the instance and never shrinks. After each call these tests scan the whole memory for the key,
// seed, plaintext and outputs: the zero-on-free allocator, the boxed key schedules and the
// post-call stack scrub in the bindings are what make them pass.
//
// The asynchronous entry points (OT, Yao) hold their state in live objects between calls, so
// while those live the scan covers the *dead* shadow stack (below the stack pointer's resting
// value: everything a finished step left behind), for each secret and each 8-byte half of it (a
// block spilled as two 64-bit words); once every object is freed it covers all of memory.
import { createCipheriv, createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createMemoryTransports } from '../dist/net/memory.js';
import type { Transport } from '../dist/net/transport.js';
import { DIST, hex, nodeAes, rand } from './helpers.js';

// A private instance of the raw bindings, so the scan sees exactly this module's memory.
type Raw = typeof import('../dist/wasm-gen/webmpc.js');
let raw: Raw;
let memory: WebAssembly.Memory;
/** Where the shadow stack starts (it grows down from here), read from the module itself. */
let stackTop: number;

beforeAll(async () => {
  const gen = join(DIST, 'wasm-gen');
  raw = (await import(join(gen, 'webmpc.js'))) as Raw;
  const bytes = await readFile(join(gen, 'webmpc_bg.wasm'));
  const exports = await raw.default({ module_or_path: bytes });
  memory = exports.memory;
  stackTop = initialStackPointer(new Uint8Array(bytes));
});

/**
 * The initial value of global 0, `__stack_pointer` in a Rust wasm32 module: the global section
 * (id 6) starts with it as `i32 mut (i32.const N)`.
 */
function initialStackPointer(wasm: Uint8Array): number {
  let at = 8;
  const leb = (signed: boolean): number => {
    let result = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = wasm[at++]!;
      result |= (byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    if (signed && shift < 32 && byte & 0x40) result |= -1 << shift;
    return result;
  };
  while (at < wasm.length) {
    const id = wasm[at++]!;
    const size = leb(false);
    if (id === 6) {
      leb(false); // number of globals
      const [type, mutable, op] = [wasm[at]!, wasm[at + 1]!, wasm[at + 2]!];
      if (type !== 0x7f || mutable !== 1 || op !== 0x41) throw new Error('global 0 is not the i32 stack pointer');
      at += 3;
      return leb(true);
    }
    at += size;
  }
  throw new Error('no global section');
}

/** Every offset at which `needle` (at least 16 bytes, so chance matches are impossible) occurs. */
function findInMemory(needle: Uint8Array): number[] {
  const hay = Buffer.from(memory.buffer);
  const hits: number[] = [];
  for (let at = hay.indexOf(needle); at !== -1; at = hay.indexOf(needle, at + 1)) hits.push(at);
  return hits;
}

describe('no secret is left in Wasm linear memory after a call', () => {
  it('AES: key, plaintext and ciphertext', () => {
    const key = rand(16);
    const pt = rand(16 * 37);
    const ct = raw.aesEncrypt(key, pt);
    expect(hex(ct)).toBe(hex(nodeAes(key, pt)));
    expect(findInMemory(key)).toEqual([]);
    expect(findInMemory(pt.subarray(0, 16))).toEqual([]);
    expect(findInMemory(pt.subarray(16 * 36))).toEqual([]);
    expect(findInMemory(ct.subarray(0, 16))).toEqual([]);
    expect(findInMemory(ct.subarray(16 * 36))).toEqual([]);
  });

  it('PRG: seed and keystream, once the generator is freed', () => {
    const seed = rand(16);
    const prg = new raw.Prg(seed);
    const first = prg.fillBytes(1000);
    const more = prg.fillBytes(24);
    prg.free();
    expect(findInMemory(seed)).toEqual([]);
    expect(findInMemory(first.subarray(0, 16))).toEqual([]);
    expect(findInMemory(first.subarray(992, 1000))).toEqual([]);
    // The unread rest of the buffered keystream block is gone too: regenerate it to look for it.
    const again = new raw.Prg(seed);
    const stream = again.fillBytes(1024 + 64 * 16);
    again.free();
    expect(hex(stream.subarray(1000, 1024))).toBe(hex(more));
    expect(findInMemory(stream.subarray(1024, 1040))).toEqual([]);
  });

  it('hashes and GF(2^128): inputs and outputs', () => {
    const x = rand(16 * 100);
    const t = rand(16 * 100);
    for (const out of [raw.hashCr(x), raw.hashCcr(x), raw.hashTccr(x, t), raw.gf128Mul(x, t)]) {
      expect(findInMemory(out.subarray(0, 16))).toEqual([]);
    }
    expect(findInMemory(x.subarray(0, 16))).toEqual([]);
    expect(findInMemory(t.subarray(16 * 99))).toEqual([]);
  });

  it('transpose: the stack tiles of a ragged-width matrix (the post-call stack scrub)', () => {
    // 136 columns: one full 128-column tile and a tail tile padded on the stack.
    const n = 136;
    const rows = rand(16 * n);
    const cols = raw.transpose128xN(rows, n);
    for (let j = 128; j < n; j++) expect(findInMemory(cols.subarray(16 * j, 16 * j + 16))).toEqual([]);
  });

  it('platform randomness handed out', () => {
    const r = raw.randomBytes(64);
    expect(findInMemory(r.subarray(0, 16))).toEqual([]);
  });
});

// --- the asynchronous entry points -----------------------------------------------------------

const block = (b: Uint8Array, j: number) => b.subarray(16 * j, 16 * j + 16);
const xorb = (a: Uint8Array, b: Uint8Array) => a.map((x, i) => x ^ b[i]!);

/** Secrets (or 8-byte halves of them) found in `[from, to)` of linear memory, as `index@offset`. */
function leaks(secrets: Uint8Array[], from: number, to: number): string[] {
  const halves = new Map<string, string>();
  secrets.forEach((s, k) => {
    for (const o of [0, 8]) {
      const h = Buffer.from(s.subarray(o, o + 8)).toString('hex');
      if (h !== '0000000000000000') halves.set(h, `secret ${k} (bytes ${o}..${o + 8})`);
    }
  });
  const mem = Buffer.from(memory.buffer);
  const found: string[] = [];
  for (let at = from; at + 8 <= to; at++) {
    // Every 8-byte window, whatever its alignment.
    const hit = halves.get(mem.toString('hex', at, at + 8));
    if (hit) found.push(`${hit} at ${at}`);
  }
  return found;
}

/** Nothing of `secrets` on the dead shadow stack (what finished steps left there). */
function expectStackClean(secrets: Uint8Array[], when: string): void {
  expect(stackTop).toBeGreaterThan(64 * 1024);
  expect(leaks(secrets, 0, stackTop), when).toEqual([]);
}

/** Nothing of `secrets` anywhere in linear memory. */
function expectMemoryClean(secrets: Uint8Array[], when: string): void {
  expect(leaks(secrets, 0, memory.buffer.byteLength), when).toEqual([]);
}

const bits = (n: number) => rand(n).map((x) => x & 1);

describe('no secret is left on the Wasm stack by the asynchronous entry points', () => {
  it('OT: Δ, keys and outputs after otSenderSetup, every call, and free', async () => {
    const [a, b] = createMemoryTransports(2) as [Transport, Transport];
    const sid = rand(32);
    // The explicit-Δ API: the test knows Δ because it chose it (with the opt-in, so the hashed
    // outputs can be checked too).
    const delta = rand(16);
    const [s, r] = await Promise.all([raw.otSenderSetup(a, 1, sid, delta, true), raw.otReceiverSetup(b, 0, sid)]);
    expect(hex(s.delta())).toBe(hex(delta));
    expectStackClean([delta], 'after otSenderSetup');

    const n = 1000;
    const choices = bits(n);
    const [keys, macs] = (await Promise.all([s.sendCot(n), r.receiveCot(choices)])) as [Uint8Array, Uint8Array];
    const secrets = [delta];
    for (let j = 0; j < n; j++) {
      expect(hex(block(macs, j))).toBe(hex(choices[j] ? xorb(block(keys, j), delta) : block(keys, j)));
      secrets.push(block(keys, j).slice(), xorb(block(keys, j), delta));
    }
    expectStackClean(secrets, 'after Δ-OT');

    const [pairs, got] = (await Promise.all([s.sendRandom(n), r.receiveRandom(n)])) as [
      Uint8Array,
      { choices: Uint8Array; messages: Uint8Array },
    ];
    for (let j = 0; j < 2 * n; j++) secrets.push(block(pairs, j).slice());
    for (let j = 0; j < n; j++) expect(hex(block(got.messages, j))).toBe(hex(block(pairs, 2 * j + got.choices[j]!)));
    expectStackClean(secrets, 'after random OT');

    const m0 = rand(16 * n);
    const m1 = rand(16 * n);
    const flat = new Uint8Array(32 * n);
    for (let j = 0; j < n; j++) {
      flat.set(block(m0, j), 32 * j);
      flat.set(block(m1, j), 32 * j + 16);
      secrets.push(block(m0, j), block(m1, j));
    }
    await Promise.all([s.sendChosen(flat), r.receiveChosen(choices)]);
    expectStackClean(secrets, 'after chosen-message OT');

    s.free();
    r.free();
    expectMemoryClean(secrets, 'after both OT sessions were freed');
  });

  it('Yao: Δ, the garbler\'s labels, hashes and AND outputs after a run, and after free', async () => {
    // Δ is drawn inside Wasm and never leaves it; the test learns it by recording what the module
    // takes from crypto.getRandomValues during setup (a hook in the test, nothing in the module),
    // then recognising the garbler's PRG seed s and Δ from the first active label it sends:
    // label_0 = AES_s(0) ⊕ x_0·Δ with Δ = (a drawn block) | 1.
    const draws: Uint8Array[] = [];
    const getRandomValues = globalThis.crypto.getRandomValues;
    globalThis.crypto.getRandomValues = ((array: Uint8Array<ArrayBuffer>) => {
      const out = getRandomValues.call(globalThis.crypto, array);
      draws.push(new Uint8Array(array.buffer, array.byteOffset, array.byteLength).slice());
      return out;
    }) as typeof globalThis.crypto.getRandomValues;
    const [a, b] = createMemoryTransports(2) as [Transport, Transport];
    const sent: Uint8Array[] = [];
    const recording: Transport = {
      party: a.party,
      parties: a.parties,
      closed: a.closed,
      send: (to, data) => {
        sent.push(data.slice());
        return a.send(to, data);
      },
      recv: (from, o) => a.recv(from, o),
      close: (reason) => a.close(reason),
    };
    const sid = rand(32);
    let g: import('../dist/wasm-gen/webmpc.js').YaoSession;
    let e: import('../dist/wasm-gen/webmpc.js').YaoSession;
    try {
      [g, e] = await Promise.all([raw.yaoSetup(recording, 'garbler', 1, sid), raw.yaoSetup(b, 'evaluator', 0, sid)]);
    } finally {
      globalThis.crypto.getRandomValues = getRandomValues;
    }
    expectStackClean(draws.filter((d) => d.length >= 16).map((d) => d.subarray(0, 16)), 'after yaoSetup');

    // t_i = x_i ∧ x_{i+1} (garbler's input only, so every label is computable), out_i = t_i ⊕ y_i.
    let text = '128 256\n2 64 64\n1 64\n\n';
    for (let i = 0; i < 64; i++) text += `2 1 ${i} ${(i + 1) % 64} ${128 + i} AND\n`;
    for (let i = 0; i < 64; i++) text += `2 1 ${128 + i} ${64 + i} ${192 + i} XOR\n`;
    const circuit = new raw.PreparedCircuit(raw.circuitFromBristol(text));
    const x = rand(8);
    x[7]! |= 1; // x_0 = 1, so the first active label is AES_s(0) ⊕ Δ (see below)
    const y = rand(8);
    const before = sent.length;
    const owners = new Uint8Array([0, 1]);
    const both = new Uint8Array([2]);
    const [outG, outE] = (await Promise.all([g.run(circuit, owners, both, [x], undefined), e.run(circuit, owners, both, [y], undefined)])) as [
      Uint8Array[],
      Uint8Array[],
    ];
    const want = new Uint8Array(8);
    for (let i = 0; i < 64; i++) {
      const bit = (v: Uint8Array, k: number) => (v[7 - (k >> 3)]! >> (k & 7)) & 1;
      if ((bit(x, i) & bit(x, (i + 1) % 64)) ^ bit(y, i)) want[7 - (i >> 3)]! |= 1 << (i & 7);
    }
    expect([hex(outG[0]!), hex(outE[0]!)]).toEqual([hex(want), hex(want)]);

    // The run's messages: the garbler's 64 active labels and its 64 AND tables.
    const run = sent.slice(before);
    const active = run.find((m) => m.length === 16 * 64)!;
    const tables = run.find((m) => m.length === 32 * 64)!;
    const aes = (key: Uint8Array, v: Uint8Array) => {
      const c = createCipheriv('aes-128-ecb', key, null);
      c.setAutoPadding(false);
      return new Uint8Array(Buffer.concat([c.update(v), c.final()]));
    };
    const le = (v: bigint) => Uint8Array.from({ length: 16 }, (_, i) => Number((v >> BigInt(8 * i)) & 0xffn));
    let delta: Uint8Array | undefined;
    let seed: Uint8Array | undefined;
    for (const s of draws.filter((d) => d.length === 16)) {
      const d = xorb(block(active, 0), aes(s, le(0n)));
      if (draws.some((r) => r.length === 16 && hex(r.map((v, i) => (i === 0 ? v | 1 : v))) === hex(d))) [delta, seed] = [d, s];
    }
    expect(delta, 'Δ recognised from the recorded randomness').toBeDefined();

    // Every label of the AND layer, computed as the garbler does (half-gates with TMMO under
    // the fixed key, tweak = run tag · 2^64 + 2·gate + half) and checked against the tables sent.
    const pi = (v: Uint8Array) => aes(raw.fixedKey(), v);
    const H = (v: Uint8Array, t: bigint) => xorb(pi(xorb(pi(v), le(t))), pi(v));
    const tagBytes = createHash('sha256').update('webmpc/yao/tweak-tag/v1').update(sid).update(new Uint8Array(8)).digest();
    const tag = tagBytes.subarray(0, 8).reduceRight((acc, byte) => (acc << 8n) | BigInt(byte), 0n);
    const zero = Array.from({ length: 64 }, (_, w) => aes(seed!, le(BigInt(w))));
    const when = (bit: number, v: Uint8Array) => (bit ? v : new Uint8Array(16));
    const secrets: Uint8Array[] = [delta!, seed!];
    for (let i = 0; i < 64; i++) {
      const [a0, b0] = [zero[i]!, zero[(i + 1) % 64]!];
      const [j0, j1] = [(tag << 64n) | BigInt(2 * i), (tag << 64n) | BigInt(2 * i + 1)];
      const h = [H(a0, j0), H(xorb(a0, delta!), j0), H(b0, j1), H(xorb(b0, delta!), j1)];
      const tg = xorb(xorb(h[0]!, h[1]!), when(b0[0]! & 1, delta!));
      const te = xorb(xorb(h[2]!, h[3]!), a0);
      expect([hex(tg), hex(te)], `AND gate ${i}'s table`).toEqual([hex(block(tables, 2 * i)), hex(block(tables, 2 * i + 1))]);
      const c0 = xorb(xorb(h[0]!, when(a0[0]! & 1, tg)), xorb(h[2]!, when(b0[0]! & 1, xorb(te, a0))));
      secrets.push(a0, xorb(a0, delta!), c0, xorb(c0, delta!), ...h, pi(a0), pi(xorb(a0, delta!)));
    }
    expectStackClean(secrets, 'after a Yao run');

    g.free();
    e.free();
    circuit.free();
    expectMemoryClean(secrets, 'after both Yao sessions were freed');
  });
});
