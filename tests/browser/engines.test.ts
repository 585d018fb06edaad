// The SDK on every engine — Chromium, Firefox ESR (WebDriver BiDi) and WebKitGTK (WebKitWebDriver
// + MiniBrowser under Xvfb) — with one page per engine doing every protocol, so that the matrix
// costs three browser launches, not one per protocol: the Wasm kernels (SIMD128 build, FIPS-197 and
// agreement with Node), OT, the secure channel, yao2pc, authgc and MASCOT, each with both parties
// in the page over in-memory transports wrapped in pinned secure channels; then each page against
// a party in Node over the network (WebRTC where the engine has it, else the signaling server's
// relay), and a Firefox page against a Chromium page over WebRTC. What an engine lacks (WebKitGTK
// as Debian builds it has no WebRTC) must be a typed error at once, not a hang.
//
// The existing Chromium-only files test each feature in depth; this one checks that every engine
// runs the same SDK to the same outputs, and prints each engine's protocol times side by side.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as webmpc from '../../dist/index.js';
import * as net from '../../dist/net/node.js';
import { exportIdentitySecret, generateIdentity, secureTransport, type Identity } from '../../dist/secure/index.js';
import { serveStatic, type StaticServer } from '../../scripts/lib/static-server.mjs';
import { DIST, ROOT, hex, nodeAes, rand, unhex } from '../helpers.js';
import { ENGINES, ENGINE_NAMES, SUPPORTS, launch, skipEngine, type Engine, type EngineBrowser, type EnginePage } from './engines.js';
import { SODIUM, SODIUM_WRAPPERS, b64, sdkPage, unb64 } from './sdk-page.js';

const KEY = '000102030405060708090a0b0c0d0e0f';
const PT = '00112233445566778899aabbccddeeff';
const CT = '69c4e0d86a7b0430d8cdb78070b4c55a';

/** What a page's protocol run returns: outputs as strings, or the error's name, code and message. */
type Outcome<T> = ({ ok: true; ms: number } & T) | { ok: false; name?: string; code?: string; message: string };

/**
 * The page's own module script (not functions shipped through evaluate: WebKit's driver takes
 * source text, and the test runner rewrites functions): `window.suite`, one function per check,
 * each resolving to plain JSON.
 */
const SUITE = `
const { webmpc, net, secure } = window.sdk;
const circuits = webmpc.circuit;
const toHex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
const fromHex = (s) => Uint8Array.from(s.match(/../g) || [], (h) => parseInt(h, 16));
const toB64 = (b) => { let s = ''; for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000)); return btoa(s); };
const fromB64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const failure = (e) => ({ ok: false, name: e && e.name, code: e && e.code, message: String((e && e.message) || e) });
const timed = async (f) => { try { const t0 = performance.now(); const r = await f(); return { ok: true, ms: performance.now() - t0, ...r }; } catch (e) { return failure(e); } };

/** Both parties in this page: in-memory transports, each wrapped in a pinned secure channel. */
async function secureBoth(tag) {
  const inner = webmpc.createMemoryTransports(2, { recvTimeoutMs: 60000 });
  const ids = await Promise.all([secure.generateIdentity(), secure.generateIdentity()]);
  const sessionId = tag + '-' + toHex(crypto.getRandomValues(new Uint8Array(6)));
  const peers = ids.map((id) => id.publicKey);
  try {
    return await Promise.all(inner.map((t, p) => secure.secureTransport(t, { identity: ids[p], sessionId, trust: 'pinned', peers })));
  } catch (e) {
    await Promise.all(inner.map((t) => t.close()));
    throw e;
  }
}
async function withSessions(tag, f) {
  const ts = await secureBoth(tag);
  try {
    const sessions = await Promise.all(ts.map((transport, party) => webmpc.session({ transport, party, parties: 2 })));
    try { return await f(sessions); } finally { await Promise.all(sessions.map((s) => s.close())); }
  } finally {
    await Promise.all(ts.map((t) => t.close()));
  }
}

window.suite = {
  userAgent: () => navigator.userAgent,
  hasWebRtc: () => typeof RTCPeerConnection !== 'undefined',
  kernels: (input) => {
    const h = (k) => fromHex(input[k]);
    return {
      backend: webmpc.backendName(),
      fips: toHex(webmpc.aesEncrypt(fromHex('${KEY}'), fromHex('${PT}'))),
      aes: toHex(webmpc.aesEncrypt(h('key'), h('x'))),
      tccr: toHex(webmpc.hashTccr(h('x'), h('t'))),
      mul: toHex(webmpc.gf128Mul(h('x'), h('t'))),
      transpose: toHex(webmpc.transpose128xN(h('rows'), input.cols)),
      prg: toHex(new webmpc.Prg(h('seed')).fillBytes(1000)),
    };
  },
  secureChannel: (bytes) => timed(async () => {
    const [a, b] = await secureBoth('channel');
    try {
      // Bigger than one segment of the channel, both ways at once.
      const m = new Uint8Array(bytes);
      for (let i = 0; i < bytes; i += 65536) crypto.getRandomValues(m.subarray(i, i + 65536)); // its limit per call
      const back = m.map((x) => x ^ 0xff);
      const [, got, , gotBack] = await Promise.all([a.send(1, m), b.recv(0), b.send(0, back), a.recv(1)]);
      return { intact: toHex(got) === toHex(m) && toHex(gotBack) === toHex(back), length: got.length };
    } finally { await Promise.all([a.close(), b.close()]); }
  }),
  /** Party 1 pins a key that is not party 0's: the handshake must fail, typed, on both sides. */
  wrongKey: async () => {
    const inner = webmpc.createMemoryTransports(2, { recvTimeoutMs: 20000 });
    const [id0, id1, stranger] = await Promise.all([secure.generateIdentity(), secure.generateIdentity(), secure.generateIdentity()]);
    const pins = [[id0.publicKey, id1.publicKey], [stranger.publicKey, id1.publicKey]];
    const out = await Promise.all([id0, id1].map((identity, p) =>
      secure.secureTransport(inner[p], { identity, sessionId: 'wrong-key', trust: 'pinned', peers: pins[p], handshakeTimeoutMs: 20000 })
        .then(async (t) => { await t.close(); return { ok: true }; }, failure)));
    await Promise.all(inner.map((t) => t.close()));
    return out;
  },
  ot: (n) => timed(async () => {
    const [a, b] = await secureBoth('ot');
    try {
      const sessionId = crypto.getRandomValues(new Uint8Array(32));
      const [s, r] = await Promise.all([webmpc.otSender({ transport: a, peer: 1, sessionId }), webmpc.otReceiver({ transport: b, peer: 0, sessionId })]);
      const [{ m0, m1 }, { choices, messages }] = await Promise.all([s.sendRandom(n), r.receiveRandom(n)]);
      s.free(); r.free();
      return { m0: toB64(m0), m1: toB64(m1), choices: toB64(choices), messages: toB64(messages) };
    } finally { await Promise.all([a.close(), b.close()]); }
  }),
  aes: (protocol) => timed(() => withSessions(protocol, async (sessions) => {
    const c = circuits.aes128Circuit();
    const inputs = [fromHex('${KEY}'), fromHex('${PT}')];
    const outs = await Promise.all(sessions.map((s, p) => s.run(c, { protocol, inputs: [inputs[p]] })));
    return { outputs: outs.map((o) => o.map((v) => (v ? toHex(v) : null))) };
  })),
  /** MASCOT, small: x < y to both, x − y to party 1 only, x·y to both (16-bit signed). */
  mascot: (x, y) => timed(() => withSessions('mascot', async (sessions) => {
    const b = new webmpc.program.ProgramBuilder({ parties: 2 });
    const vx = b.sint(0, 16);
    const vy = b.sint(1, 16);
    b.output(vx.lt(vy));
    b.output(vx.sub(vy), { to: 1 });
    b.output(vx.mul(vy));
    const prog = await b.build();
    const mine = [BigInt(x), BigInt(y)];
    const outs = await Promise.all(sessions.map((s, p) => s.run(prog, { protocol: 'mascot', inputs: prog.encodeInputs(p, [mine[p]]) }).then((o) => prog.decodeOutputs(o))));
    return { outputs: outs.map((o) => o.map((v) => (v === undefined ? null : v.toString()))) };
  })),
  /**
   * One party of yao2pc AES-128 over the network, in a pinned secure channel: via 'webrtc'
   * (connectMesh) or 'relay' (connectRelay). Resolves with the outputs or the typed error.
   */
  aesOverNetwork: ({ via, signalingUrl, room, party, seed, peers, input, connectTimeoutMs }) => timed(async () => {
    const identity = await secure.importIdentitySecret(fromB64(seed));
    const inner = via === 'relay'
      ? await net.connectRelay({ url: signalingUrl + '/relay', room, party, parties: 2, connectTimeoutMs })
      : await net.connectMesh({ signalingUrl, room, party, parties: 2, connectTimeoutMs });
    let t;
    try {
      t = await secure.secureTransport(inner, { identity, sessionId: room, trust: 'pinned', peers: peers.map(fromB64) });
      const s = await webmpc.session({ transport: t, party, parties: 2 });
      try {
        const out = await s.run(circuits.aes128Circuit(), { protocol: 'yao2pc', inputs: [fromHex(input)] });
        return { outputs: out.map((v) => (v ? toHex(v) : null)) };
      } finally { s.free(); }
    } finally { await (t || inner).close(); }
  }),
};
window.suiteReady = true;
`;

declare global {
  interface Window {
    suiteReady?: boolean;
    suite: {
      userAgent(): string;
      hasWebRtc(): boolean;
      kernels(input: Record<string, string | number>): Record<string, string>;
      secureChannel(bytes: number): Promise<Outcome<{ intact: boolean; length: number }>>;
      wrongKey(): Promise<{ ok: boolean; code?: string; message?: string }[]>;
      ot(n: number): Promise<Outcome<{ m0: string; m1: string; choices: string; messages: string }>>;
      aes(protocol: 'yao2pc' | 'authgc'): Promise<Outcome<{ outputs: (string | null)[][] }>>;
      mascot(x: string, y: string): Promise<Outcome<{ outputs: (string | null)[][] }>>;
      aesOverNetwork(args: NetworkArgs): Promise<Outcome<{ outputs: (string | null)[] }>>;
    };
  }
}

type Via = 'webrtc' | 'relay';
interface NetworkArgs {
  via: Via;
  signalingUrl: string;
  room: string;
  party: number;
  seed: string;
  peers: string[];
  input: string;
  connectTimeoutMs: number;
}

/** Indices where the receiver's OT output is not the message its choice picked. */
function badOts(m0: Uint8Array, m1: Uint8Array, choices: Uint8Array, messages: Uint8Array): number[] {
  const bad: number[] = [];
  for (let i = 0; i < choices.length; i++) {
    const want = (choices[i] ? m1 : m0).subarray(16 * i, 16 * i + 16);
    if (hex(messages.subarray(16 * i, 16 * i + 16)) !== hex(want)) bad.push(i);
  }
  return bad;
}

/** Each engine's protocol times (ms), printed side by side once every engine has run. */
const times = new Map<Engine, Record<string, number>>();

let server: StaticServer;
let signaling: net.SignalingServer;

beforeAll(async () => {
  await webmpc.init();
  server = await serveStatic(
    { '/dist/': DIST, [SODIUM_WRAPPERS]: join(ROOT, 'node_modules/libsodium-wrappers/'), [SODIUM]: join(ROOT, 'node_modules/libsodium/') },
    { '/': sdkPage('webmpc on every engine') },
  );
  signaling = await net.startSignalingServer({ port: 0, relay: true });
});

afterAll(async () => {
  await signaling?.close();
  await server?.close();
  if (times.size > 0) {
    const names = [...new Set([...times.values()].flatMap((t) => Object.keys(t)))];
    const rows = names.map((n) => `  ${n.padEnd(28)}${[...times.keys()].map((e) => `${(times.get(e)![n]?.toFixed(0) ?? '-').padStart(12)}`).join('')}`);
    console.log(`protocol times in one page, ms (both parties in the page unless said)\n  ${''.padEnd(28)}${[...times.keys()].map((e) => ENGINE_NAMES[e].padStart(12)).join('')}\n${rows.join('\n')}`);
  }
});

/** Loads the SDK page and its suite in `page`; throws with the page's error if either fails. */
async function openSuite(page: EnginePage): Promise<void> {
  await page.goto(`${server.url}/`);
  await page.waitForFunction(() => window.sdkStatus !== undefined, undefined, { timeout: 60_000 });
  const status = await page.evaluate(() => window.sdkStatus);
  if (!status?.ok) throw new Error(`the SDK failed to load in the page: ${status?.error}`);
  await page.addScriptTag({ type: 'module', content: SUITE });
  await page.waitForFunction(() => window.suiteReady === true, undefined, { timeout: 30_000 });
}

async function keysFor(identities: Identity[], party: number): Promise<{ seed: string; peers: string[] }> {
  return { seed: b64(await exportIdentitySecret(identities[party]!)), peers: identities.map((id) => b64(id.publicKey)) };
}

/** Node's side of {@link Window.suite.aesOverNetwork}. */
async function aesInNode(via: Via, room: string, party: number, identities: Identity[], input: string): Promise<string[]> {
  const opts = { room, party, parties: 2, connectTimeoutMs: 30_000 };
  const inner = via === 'relay' ? await net.connectNodeRelay({ url: `${signaling.url}/relay`, ...opts }) : await net.connectNodeMesh({ signalingUrl: signaling.url, ...opts });
  let t: net.Transport | undefined;
  try {
    t = await secureTransport(inner, { identity: identities[party]!, sessionId: room, trust: 'pinned', peers: identities.map((id) => id.publicKey) });
    const s = await webmpc.session({ transport: t, party, parties: 2 });
    try {
      return (await s.run(webmpc.circuit.aes128Circuit(), { protocol: 'yao2pc', inputs: [unhex(input)] })).map((v) => hex(v!));
    } finally {
      s.free();
    }
  } finally {
    await (t ?? inner).close();
  }
}

for (const engine of ENGINES) {
  describe.skipIf(skipEngine(engine))(`every protocol in one ${ENGINE_NAMES[engine]} page`, () => {
    let browser: EngineBrowser | undefined;
    let page: EnginePage;
    const mine: Record<string, number> = {};

    beforeAll(async () => {
      times.set(engine, mine);
      const b = (browser = await launch(engine));
      page = b.page;
      await openSuite(page);
      console.log(`${b.version}: ${await page.evaluate(() => window.suite.userAgent())}`);
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
    });

    it('Wasm kernels: the SIMD128 build, FIPS-197 C.1 and the same outputs as Node', async () => {
      const cols = 1032;
      const input = { key: hex(rand(16)), x: hex(rand(16 * 257)), t: hex(rand(16 * 257)), rows: hex(rand(16 * cols)), seed: hex(rand(16)), cols };
      const got = await page.evaluate((i) => window.suite.kernels(i), input);
      const b = unhex;
      expect(got).toEqual({
        backend: webmpc.backendName(),
        fips: CT,
        aes: hex(nodeAes(b(input.key), b(input.x))),
        tccr: hex(webmpc.hashTccr(b(input.x), b(input.t))),
        mul: hex(webmpc.gf128Mul(b(input.x), b(input.t))),
        transpose: hex(webmpc.transpose128xN(b(input.rows), cols)),
        prg: hex(new webmpc.Prg(b(input.seed)).fillBytes(1000)),
      });
      // One module, built with SIMD128: an engine without it would fail to compile it, not fall back.
      expect(got.backend).toMatch(/simd/i);
      expect(browser!.problems).toEqual([]);
    });

    it('secure channel: 1 MiB each way intact; a wrong pinned key fails the handshake with AUTHENTICATION_FAILED', async () => {
      const r = await page.evaluate((n) => window.suite.secureChannel(n), 1 << 20);
      expect(r).toMatchObject({ ok: true, intact: true, length: 1 << 20 });
      if (r.ok) mine['secure channel 2×1 MiB'] = r.ms;
      const wrong = await page.evaluate(() => window.suite.wrongKey());
      expect(wrong.some((w) => !w.ok && w.code === 'AUTHENTICATION_FAILED')).toBe(true);
      expect(wrong.every((w) => !w.ok)).toBe(true);
    });

    it('OT: 10^4 random OTs in secure channels, every OT checked', async () => {
      const n = 10_000;
      const r = await page.evaluate((k) => window.suite.ot(k), n);
      expect(r).toMatchObject({ ok: true });
      if (!r.ok) return;
      mine['OT 10^4 random'] = r.ms;
      const [m0, m1, choices, messages] = [r.m0, r.m1, r.choices, r.messages].map(unb64) as [Uint8Array, Uint8Array, Uint8Array, Uint8Array];
      expect(choices.length).toBe(n);
      expect(Math.abs(choices.reduce((s, c) => s + c, 0) - n / 2)).toBeLessThan(n / 20);
      expect(badOts(m0, m1, choices, messages)).toEqual([]);
      messages[16 * 7]! ^= 1; // the check can fail
      expect(badOts(m0, m1, choices, messages)).toEqual([7]);
    });

    for (const protocol of ['yao2pc', 'authgc'] as const) {
      it(`${protocol}: AES-128 gives the FIPS-197 vector to both parties`, async () => {
        const r = await page.evaluate((p) => window.suite.aes(p), protocol);
        expect(r).toMatchObject({ ok: true, outputs: [[CT], [CT]] });
        if (r.ok) mine[`${protocol} AES-128`] = r.ms;
      });
    }

    it('MASCOT: comparison, difference (to party 1 only) and product of 16-bit signed inputs', async () => {
      const r = await page.evaluate(([x, y]) => window.suite.mascot(x, y), ['-300', '77'] as const);
      // -300 < 77; -300 − 77 = −377 to party 1 only; −300 · 77 = −23100.
      expect(r).toMatchObject({ ok: true, outputs: [['1', null, '-23100'], ['1', '-377', '-23100']] });
      if (r.ok) mine['MASCOT cmp+sub+mul'] = r.ms;
      expect(browser!.problems).toEqual([]);
    }, 120_000);

    if (SUPPORTS[engine].webrtc) {
      it(`${ENGINE_NAMES[engine]}↔Node over WebRTC: yao2pc AES-128, FIPS vector on both`, async () => {
        const room = `engines-${engine}-node-${randomBytes(6).toString('hex')}`;
        const ids = await Promise.all([generateIdentity(), generateIdentity()]);
        const [inPage, inNode] = await Promise.all([
          page.evaluate((a) => window.suite.aesOverNetwork(a), { via: 'webrtc' as Via, signalingUrl: signaling.url, room, party: 0, ...(await keysFor(ids, 0)), input: KEY, connectTimeoutMs: 30_000 }),
          aesInNode('webrtc', room, 1, ids, PT),
        ]);
        expect(inPage).toMatchObject({ ok: true, outputs: [CT] });
        expect(inNode).toEqual([CT]);
        if (inPage.ok) mine['yao2pc AES ↔Node WebRTC'] = inPage.ms;
        expect(browser!.problems).toEqual([]);
      });
    } else {
      it(`${ENGINE_NAMES[engine]} has no WebRTC: connectMesh fails at once with UNSUPPORTED, and the relay reaches Node instead`, async () => {
        expect(await page.evaluate(() => window.suite.hasWebRtc())).toBe(false);
        const room = `engines-${engine}-node-${randomBytes(6).toString('hex')}`;
        const ids = await Promise.all([generateIdentity(), generateIdentity()]);
        const keys = await keysFor(ids, 0);
        const t0 = performance.now();
        const refused = await page.evaluate((a) => window.suite.aesOverNetwork(a), { via: 'webrtc' as Via, signalingUrl: signaling.url, room, party: 0, ...keys, input: KEY, connectTimeoutMs: 30_000 });
        expect(refused).toMatchObject({ ok: false, name: 'TransportError', code: 'UNSUPPORTED' });
        expect(refused.ok ? '' : refused.message).toMatch(/no WebRTC.*connectRelay/);
        // Well within the connect timeout: refused, not timed out.
        expect(performance.now() - t0).toBeLessThan(10_000);
        const [inPage, inNode] = await Promise.all([
          page.evaluate((a) => window.suite.aesOverNetwork(a), { via: 'relay' as Via, signalingUrl: signaling.url, room: `${room}-relay`, party: 0, ...keys, input: KEY, connectTimeoutMs: 30_000 }),
          aesInNode('relay', `${room}-relay`, 1, ids, PT),
        ]);
        expect(inPage).toMatchObject({ ok: true, outputs: [CT] });
        expect(inNode).toEqual([CT]);
        if (inPage.ok) mine['yao2pc AES ↔Node relay'] = inPage.ms;
        expect(browser!.problems).toEqual([]);
      });
    }

    // Between engines: this Firefox page and a Chromium page (launched here, so the matrix needs
    // no second Firefox) over a WebRTC data channel through the signaling server.
    if (engine === 'firefox') {
      it.skipIf(skipEngine('chromium'))('Firefox↔Chromium over WebRTC: yao2pc AES-128, FIPS vector on both pages', async () => {
        const chromium = await launch('chromium');
        try {
          await openSuite(chromium.page);
          const room = `engines-firefox-chromium-${randomBytes(6).toString('hex')}`;
          const ids = await Promise.all([generateIdentity(), generateIdentity()]);
          const args = { via: 'webrtc' as Via, signalingUrl: signaling.url, room, connectTimeoutMs: 30_000 };
          const [inFirefox, inChromium] = await Promise.all([
            page.evaluate((a) => window.suite.aesOverNetwork(a), { ...args, party: 0, ...(await keysFor(ids, 0)), input: KEY }),
            chromium.page.evaluate((a) => window.suite.aesOverNetwork(a), { ...args, party: 1, ...(await keysFor(ids, 1)), input: PT }),
          ]);
          expect(inFirefox).toMatchObject({ ok: true, outputs: [CT] });
          expect(inChromium).toMatchObject({ ok: true, outputs: [CT] });
          if (inFirefox.ok) mine['yao2pc AES ↔Chromium WebRTC'] = inFirefox.ms;
          expect(chromium.problems).toEqual([]);
          expect(browser!.problems).toEqual([]);
        } finally {
          await chromium.close();
        }
      }, 120_000);
    }
  });
}
