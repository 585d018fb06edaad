// The `authgc` suite: n-party authenticated garbling (Wang–Ranellucci–Katz; malicious, with
// abort) on AES-128 and SHA-256 for n = 2, 3, 4: party 0 evaluates and supplies input 1, party 1
// supplies input 2, every party learns the output. Per-phase times as the paper separates them:
//   setup        building every party's preprocessor (base OTs, for a real F_Pre)
//   independent  AND triples and wire masks for the circuit's size (function-independent)
//   dependent    garbling with the circuit known, tables to the evaluator (function-dependent)
//   online       inputs, evaluation, outputs
// and the bytes each party sends per AND gate in the dependent phase against the paper's
// 4(nκ + 1) bits. Measured in the same run:
//   wasm-node  in-wasm-memory  AuthGcLocal (webmpc-baseline): every party inside the Wasm instance over the Rust
//                              in-memory network (one thread does all parties' work);
//   wasm-node  binding-memory  one AuthGcSession per party over the JS in-memory transport, in
//                              this process (each message crosses the JS/Wasm boundary);
//   native                     the same Rust code natively (bench-authgc), the baseline of the
//                              ratio rows.
// Best of several sessions per phase. The preprocessor is the trusted dealer (`ideal-insecure`)
// until the real F_Pre is wired into the binding's factory: the setup and independent rows then
// measure the dealer, not the protocol.
//
// `node scripts/bench/authgc.mjs --rss [root]`: streams generated circuits of 10^6 and 10^7 AND
// gates through runStream (2 parties, this process) and prints the peak RSS after each.
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { circuitsDir, loadBaseline } from './garble.mjs';

const SUITE = 'authgc';
const SELF = fileURLToPath(import.meta.url);
const EVALUATOR = 0;
const ALL = 0xffffffff;

async function load(root) {
  const sdk = await import(pathToFileURL(join(root, 'dist', 'index.js')).href);
  await sdk.init();
  // The same module instance the SDK initialised.
  const w = await import(pathToFileURL(join(root, 'dist', 'wasm-gen', 'webmpc.js')).href);
  // AuthGcLocal is bench-only, so it is in the never-shipped baseline module.
  const b = await loadBaseline(join(root, 'dist', 'wasm-gen'));
  return { sdk, w, b };
}

function andCount(bristol) {
  let n = 0;
  for (const line of bristol.split('\n')) if (line.trimEnd().endsWith(' AND')) n++;
  return n;
}

/** Deterministic input values (big-endian bytes) for the given widths. */
function values(widths) {
  return widths.map((w, i) => Uint8Array.from({ length: Math.ceil(w / 8) }, (_, k) => (k * 37 + i * 101 + 5) & 0xff));
}

function same(a, b) {
  return a && b && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;
}

/** One session of every phase inside the Wasm instance; returns the times and bytes. */
function localSession(w, prepared, n, ands, inputBits, inputs, expected) {
  const owners = [0, 1];
  const t0 = performance.now();
  const local = new w.AuthGcLocal(n, {});
  const t1 = performance.now();
  const b0 = local.bytesSent();
  local.preprocess(ands, ands + inputBits);
  const t2 = performance.now();
  const b1 = local.bytesSent();
  local.prepare(prepared, EVALUATOR, owners, [ALL]);
  const t3 = performance.now();
  const b2 = local.bytesSent();
  const perParty = Array.from({ length: n }, (_, p) => (p < 2 ? [inputs[p]] : []));
  const outs = local.run(prepared, EVALUATOR, owners, [ALL], perParty);
  const t4 = performance.now();
  const b3 = local.bytesSent();
  local.free();
  for (const out of outs) if (!same(out[0], expected)) throw new Error('authgc bench: wrong output (in-wasm-memory)');
  const most = (a, b) => Math.max(...a.map((x, i) => b[i] - x));
  return {
    setup: t1 - t0,
    independent: t2 - t1,
    dependent: t3 - t2,
    online: t4 - t3,
    bytes: [most(b0, b1), most(b1, b2), most(b2, b3)],
  };
}

/** One session through the binding over the JS in-memory transport, all parties here. */
async function bindingSession(sdk, w, prepared, n, ands, inputBits, inputs, expected) {
  const owners = [0, 1];
  const transports = sdk.createMemoryTransports(n, { recvTimeoutMs: 120_000 });
  const sid = new Uint8Array(randomBytes(32));
  const t0 = performance.now();
  const sessions = await Promise.all(transports.map((t) => w.authgcSetup(t, sid, {})));
  const t1 = performance.now();
  await Promise.all(sessions.map((s) => s.preprocess(ands, ands + inputBits)));
  const t2 = performance.now();
  await Promise.all(sessions.map((s) => s.prepare(prepared, EVALUATOR, owners, [ALL])));
  const t3 = performance.now();
  const outs = await Promise.all(sessions.map((s, p) => s.run(prepared, EVALUATOR, owners, [ALL], p < 2 ? [inputs[p]] : [])));
  const t4 = performance.now();
  for (const out of outs) if (!same(out[0], expected)) throw new Error('authgc bench: wrong output (binding-memory)');
  for (const s of sessions) s.free();
  await Promise.all(transports.map((t) => t.close()));
  return { setup: t1 - t0, independent: t2 - t1, dependent: t3 - t2, online: t4 - t3 };
}

function best(samples) {
  const out = {};
  for (const k of ['setup', 'independent', 'dependent', 'online']) out[k] = Math.min(...samples.map((s) => s[k]));
  out.total = Math.min(...samples.map((s) => s.setup + s.independent + s.dependent + s.online));
  return out;
}

export async function run({ root, emit, quick }) {
  const row = (kase, metric, value, unit, impl, runtime = 'wasm-node') => emit({ suite: SUITE, case: kase, metric, value, unit, runtime, impl });
  const dir = circuitsDir(root);

  // 1. Native, from the Rust bench binary.
  const native = {};
  const r = spawnSync(join(root, 'wasm', 'target', 'release', 'bench-authgc'), [dir, ...(quick ? ['--quick'] : [])], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`bench-authgc failed: ${r.stderr || r.error}`);
  for (const line of r.stdout.split('\n').filter(Boolean)) {
    const x = JSON.parse(line);
    emit(x);
    if (x.metric === 'time') native[x.case] = x.value;
  }

  // 2. Wasm.
  const { sdk, w, b: base } = await load(root);
  for (const [name, file, reps] of [
    ['aes128', 'aes_128.txt', quick ? 2 : 5],
    ['sha256', 'sha256.txt', quick ? 1 : 2],
  ]) {
    const text = await readFile(join(dir, file), 'utf8');
    const checked = sdk.prepareCircuit(text);
    const prepared = new w.PreparedCircuit(checked.binary);
    const localPrepared = new base.AuthGcLocalCircuit(checked.binary);
    const ands = andCount(text);
    const inputBits = checked.inputWidths.reduce((a, b) => a + b, 0);
    const inputs = values(checked.inputWidths);
    const expected = checked.evaluate(inputs)[0];
    for (const n of [2, 3, 4]) {
      const kase = `${name}-n${n}`;
      localSession(base, localPrepared, n, ands, inputBits, inputs, expected); // warm-up
      const samples = [];
      for (let i = 0; i < reps; i++) samples.push(localSession(base, localPrepared, n, ands, inputBits, inputs, expected));
      const b = best(samples);
      for (const phase of ['setup', 'independent', 'dependent', 'online', 'total']) {
        row(`${kase}-${phase}`, 'time', b[phase], 'ms', 'in-wasm-memory');
        const nat = native[`${kase}-${phase}`];
        if (nat && phase !== 'setup' && nat > 0) row(`${kase}-${phase}`, 'ratio_native_to_wasm', b[phase] / nat, 'x', 'in-wasm-memory');
      }
      const bytes = samples[0].bytes;
      row(`${kase}-dependent`, 'communication_per_and', bytes[1] / ands, 'bytes/AND', 'in-wasm-memory');
      row(`${kase}-dependent`, 'paper_communication_per_and', (4 * (128 * n + 1)) / 8, 'bytes/AND', 'in-wasm-memory');
      row(`${kase}-online`, 'communication', bytes[2] / 1024, 'KiB', 'in-wasm-memory');
      if (name === 'aes128' && n <= 3) {
        await bindingSession(sdk, w, prepared, n, ands, inputBits, inputs, expected); // warm-up
        const s = [];
        for (let i = 0; i < reps; i++) s.push(await bindingSession(sdk, w, prepared, n, ands, inputBits, inputs, expected));
        const bb = best(s);
        for (const phase of ['setup', 'independent', 'dependent', 'online', 'total']) row(`${kase}-${phase}`, 'time', bb[phase], 'ms', 'binding-memory');
      }
    }
    prepared.free();
    localPrepared.free();
    checked.free();
  }
}

// ---------------------------------------------------------------------------------------------
// Peak RSS of streamed circuits (--rss).

const STATE = 64;
const PIECE = 1 << 20;

/**
 * The binary encoding of `rounds` rounds over a 64-bit state s (initially x ⊕ y), each bit i in
 * turn s_i ← s_{i+1} ⊕ (s_i ∧ y_i), updated in place: 320 wires whatever the length, 64 AND
 * gates per round. Returns the header and a generator of the rest, in 1 MiB pieces.
 */
function recurrence(rounds) {
  const S = 128;
  const T = 192;
  const O = 256;
  const gates = 2 * STATE + 2 * STATE * rounds;
  const header = new Uint8Array(40);
  const hv = new DataView(header.buffer);
  header.set([0x57, 0x4d, 0x50, 0x43, 1, 0, 0, 0]);
  hv.setUint32(8, 320, true);
  hv.setBigUint64(12, BigInt(gates), true);
  hv.setUint32(20, 2, true);
  hv.setUint32(24, 64, true);
  hv.setUint32(28, 64, true);
  hv.setUint32(32, 1, true);
  hv.setUint32(36, 64, true);
  function* body() {
    let buf = new Uint8Array(PIECE);
    let view = new DataView(buf.buffer);
    let at = 0;
    const gate = function* (op, a, b, out) {
      if (at + 13 > PIECE) {
        yield buf.subarray(0, at);
        buf = new Uint8Array(PIECE);
        view = new DataView(buf.buffer);
        at = 0;
      }
      buf[at] = op;
      view.setUint32(at + 1, a, true);
      if (op === 4) {
        view.setUint32(at + 5, out, true);
        at += 9;
      } else {
        view.setUint32(at + 5, b, true);
        view.setUint32(at + 9, out, true);
        at += 13;
      }
    };
    for (let i = 0; i < STATE; i++) yield* gate(0, i, 64 + i, S + i);
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < STATE; i++) {
        yield* gate(1, S + i, 64 + i, T + i);
        yield* gate(0, S + ((i + 1) % STATE), T + i, S + i);
      }
    }
    for (let i = 0; i < STATE; i++) yield* gate(4, S + i, 0, O + i);
    if (at > 0) yield buf.subarray(0, at);
  }
  const h = createHash('sha256').update(header);
  for (const piece of body()) h.update(piece);
  return { header, hash: new Uint8Array(h.digest()), body };
}

function reference(x, y, rounds) {
  const s = Array.from({ length: STATE }, (_, i) => Number(((x ^ y) >> BigInt(i)) & 1n));
  const yb = Array.from({ length: STATE }, (_, i) => Number((y >> BigInt(i)) & 1n));
  for (let r = 0; r < rounds; r++) for (let i = 0; i < STATE; i++) s[i] = s[(i + 1) % STATE] ^ (s[i] & yb[i]);
  return s.reduce((acc, bit, i) => acc | (BigInt(bit) << BigInt(i)), 0n);
}

async function rssMain(root) {
  const { sdk, w } = await load(root);
  const x = 0x0123456789abcdefn;
  const y = 0xf0e1d2c3b4a59687n;
  const be64 = (v) => {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, v);
    return b;
  };
  const transports = sdk.createMemoryTransports(2, { recvTimeoutMs: 600_000, sendTimeoutMs: 600_000 });
  const sid = new Uint8Array(randomBytes(32));
  const sessions = await Promise.all(transports.map((t) => w.authgcSetup(t, sid, { chunkGates: 1 << 15, batch: 1 << 15 })));
  for (const ands of [1_000_000, 10_000_000]) {
    const rounds = ands / STATE;
    const c = recurrence(rounds);
    const t0 = performance.now();
    const outs = await Promise.all(
      sessions.map((s, p) => {
        const it = c.body();
        const pull = () => Promise.resolve(it.next().value ?? null);
        return s.runStream(c.header, c.hash, pull, 0, [0, 1], [ALL], [be64(p === 0 ? x : y)]);
      }),
    );
    const secs = (performance.now() - t0) / 1000;
    const got = new DataView(outs[0][0].buffer).getBigUint64(0);
    if (got !== reference(x, y, rounds)) throw new Error('wrong output');
    global.gc?.();
    const rss = process.resourceUsage().maxRSS / 1024;
    process.stdout.write(`${JSON.stringify({ suite: SUITE, case: `stream-${ands}-and-n2`, metric: 'peak_rss', value: rss, unit: 'MiB', runtime: 'wasm-node', impl: 'binding-memory', seconds: secs })}\n`);
  }
  for (const s of sessions) s.free();
  await Promise.all(transports.map((t) => t.close()));
}

if (process.argv[1] === SELF && process.argv[2] === '--rss') {
  await rssMain(process.argv[3] ?? join(SELF, '..', '..', '..'));
}
