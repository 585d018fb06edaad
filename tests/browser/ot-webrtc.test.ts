// OT extension and secure channels in Chromium over WebRTC. Each page loads the compiled SDK as
// plain ESM from the static server (dist/index.js for OT and the Wasm, dist/net for connectMesh,
// dist/secure for secureTransport, with libsodium-wrappers and libsodium mapped to their ESM
// builds in node_modules by an import map). Identities are made in Node and handed to the pages
// as seeds; the pages return the OT outputs in full (base64) and Node checks every OT.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, otReceiver, otSender } from '../../dist/index.js';
import * as net from '../../dist/net/node.js';
import {
  exportIdentitySecret,
  generateIdentity,
  secureTransport,
  type Identity,
  type SecureTransport,
} from '../../dist/secure/index.js';
import { skipBrowserTests } from './chromium.js';
import { badOts } from '../ot/check.js';
import { b64, openSdkPages, SODIUM, unb64, type Page, type SdkPages } from './sdk-page.js';

declare global {
  interface Window {
    /** This page's secure transport, between the connect and the close steps. */
    secureT: import('../../dist/secure/index.js').SecureTransport | undefined;
  }
}

interface Party {
  /** base64 of the 32-byte Ed25519 seed (exportIdentitySecret). */
  seed: string;
  /** base64 public keys of both parties, by index. */
  peers: string[];
}

/**
 * In the page: imports the identity from its seed, joins the WebRTC mesh and runs the secure
 * handshake with pinned keys. Resolves when the secure transport is up (kept on window.secureT),
 * or with the error's code and message.
 */
function connectSecureInPage(page: Page, signalingUrl: string, room: string, party: number, who: Party) {
  return page.evaluate(
    async ({ signalingUrl, room, party, seed, peers }) => {
      const bytes = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
      const { net, secure } = window.sdk;
      const identity = await secure.importIdentitySecret(bytes(seed));
      const inner = await net.connectMesh({ signalingUrl, room, party, parties: 2, connectTimeoutMs: 30_000 });
      try {
        window.secureT = await secure.secureTransport(inner, {
          identity,
          sessionId: room,
          trust: 'pinned',
          peers: peers.map(bytes),
        });
        return { ok: true as const, peerKeys: window.secureT.peerKeys.map((k) => btoa(String.fromCharCode(...k))) };
      } catch (e) {
        const err = e as { code?: string; message?: string };
        return { ok: false as const, code: err.code, message: String(err.message) };
      }
    },
    { signalingUrl, room, party, ...who },
  );
}

/**
 * In the page: sets up OT with the other party over window.secureT and runs `n` random OTs as
 * sender or receiver; returns both outputs (sender: m0, m1; receiver: choices, messages) as base64.
 */
function randomOtInPage(page: Page, role: 'sender' | 'receiver', sessionId: Uint8Array, n: number) {
  return page.evaluate(
    async ({ role, sid, n }) => {
      const toB64 = (b: Uint8Array) => {
        let s = '';
        for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
        return btoa(s);
      };
      const { webmpc } = window.sdk;
      const transport = window.secureT!;
      const sessionId = Uint8Array.from(atob(sid), (c) => c.charCodeAt(0));
      const peer = 1 - transport.party;
      if (role === 'sender') {
        const s = await webmpc.otSender({ transport, peer, sessionId });
        const { m0, m1 } = await s.sendRandom(n);
        s.free();
        return [toB64(m0), toB64(m1)] as const;
      }
      const r = await webmpc.otReceiver({ transport, peer, sessionId });
      const { choices, messages } = await r.receiveRandom(n);
      r.free();
      return [toB64(choices), toB64(messages)] as const;
    },
    { role, sid: b64(sessionId), n },
  );
}

async function sendRandomInPage(page: Page, sessionId: Uint8Array, n: number) {
  const [m0, m1] = await randomOtInPage(page, 'sender', sessionId, n);
  return { m0: unb64(m0), m1: unb64(m1) };
}

async function receiveRandomInPage(page: Page, sessionId: Uint8Array, n: number) {
  const [choices, messages] = await randomOtInPage(page, 'receiver', sessionId, n);
  return { choices: unb64(choices), messages: unb64(messages) };
}

function closeInPage(page: Page) {
  return page.evaluate(async () => {
    await window.secureT?.close();
    window.secureT = undefined;
  });
}

async function identityFor(identities: Identity[], party: number): Promise<Party> {
  return { seed: b64(await exportIdentitySecret(identities[party]!)), peers: identities.map((id) => b64(id.publicKey)) };
}

describe.skipIf(skipBrowserTests())('OT and secure channels over WebRTC in Chromium', () => {
  let env: SdkPages;

  beforeAll(async () => {
    await init();
    env = await openSdkPages('webmpc OT over WebRTC');
  }, 120_000);

  afterAll(async () => {
    await env?.close();
  });

  it('loads the SDK and its Wasm as ESM in the page, without Node-only modules, and libsodium only once used', () => {
    expect(env.server.requests).toContain('/dist/wasm-gen/webmpc_bg.wasm');
    // webmpc/secure imports libsodium on first use (the next test's secure channels).
    expect(env.server.requests).not.toContain(`${SODIUM}dist/modules-esm/libsodium.mjs`);
    expect(env.server.requests.some((p) => /server|websocket-mesh|\/node\.js/.test(p))).toBe(false);
    expect(env.browser.problems).toEqual([]);
  });

  it('Chromium↔Chromium: 10^5 random OTs inside pinned secure channels, every OT checked', async () => {
    const n = 100_000;
    const [a, b] = env.pages as [Page, Page];
    const room = `ot-c2c-${randomBytes(6).toString('hex')}`;
    const identities = await Promise.all([generateIdentity(), generateIdentity()]);
    const [ca, cb] = await Promise.all([
      connectSecureInPage(a, env.signaling.url, room, 0, await identityFor(identities, 0)),
      connectSecureInPage(b, env.signaling.url, room, 1, await identityFor(identities, 1)),
    ]);
    const keys = identities.map((id) => b64(id.publicKey));
    expect(ca).toEqual({ ok: true, peerKeys: keys });
    expect(cb).toEqual({ ok: true, peerKeys: keys });
    expect(env.server.requests).toContain(`${SODIUM}dist/modules-esm/libsodium.mjs`);

    const sessionId = new Uint8Array(randomBytes(32));
    const t0 = performance.now();
    const [{ m0, m1 }, { choices, messages }] = await Promise.all([
      sendRandomInPage(a, sessionId, n),
      receiveRandomInPage(b, sessionId, n),
    ]);
    const ms = performance.now() - t0;
    await Promise.all([closeInPage(a), closeInPage(b)]);
    console.log(`Chromium↔Chromium: ${n} random OTs (setup included) in ${ms.toFixed(0)} ms`);
    expect(choices.length).toBe(n);
    const ones = choices.reduce((s, c) => s + c, 0);
    expect(Math.abs(ones - n / 2)).toBeLessThan(n / 50);
    expect(badOts(m0, m1, choices, messages)).toEqual({ wrong: [], wrongCount: 0, equalsOther: [] });
    // The check can fail: one flipped bit in the receiver's output is caught at that index.
    messages[16 * (n - 1)]! ^= 1;
    expect(badOts(m0, m1, choices, messages)).toMatchObject({ wrong: [n - 1], wrongCount: 1 });
    expect(env.browser.problems).toEqual([]);
  }, 60_000);

  it('Chromium↔Node: 10^4 random OTs each way inside pinned secure channels, every OT checked', async () => {
    const n = 10_000;
    const page = env.pages[1]!;
    const room = `ot-c2n-${randomBytes(6).toString('hex')}`;
    const identities = await Promise.all([generateIdentity(), generateIdentity()]);
    // Filled in as the Node side comes up, for the cleanup below.
    const held: { inner?: net.Transport; node?: SecureTransport } = {};
    try {
      // Both handshakes must run at once: each waits for the other side's messages.
      const [inPage, node] = await Promise.all([
        connectSecureInPage(page, env.signaling.url, room, 0, await identityFor(identities, 0)),
        (async () => {
          const inner = await net.connectNodeMesh({ signalingUrl: env.signaling.url, room, party: 1, parties: 2, connectTimeoutMs: 30_000 });
          held.inner = inner;
          held.node = await secureTransport(inner, {
            identity: identities[1]!,
            sessionId: room,
            trust: 'pinned',
            peers: identities.map((id) => id.publicKey),
          });
          return held.node;
        })(),
      ]);
      const keys = identities.map((id) => b64(id.publicKey));
      expect(inPage).toEqual({ ok: true, peerKeys: keys });
      expect(node.peerKeys.map(b64)).toEqual(keys);

      // Page sends, Node receives.
      const sid1 = new Uint8Array(randomBytes(32));
      const [fromPage, nodeGot] = await Promise.all([
        sendRandomInPage(page, sid1, n),
        otReceiver({ transport: node, peer: 0, sessionId: sid1 }).then(async (r) => {
          const out = await r.receiveRandom(n);
          r.free();
          return out;
        }),
      ]);
      expect(badOts(fromPage.m0, fromPage.m1, nodeGot.choices, nodeGot.messages)).toEqual({
        wrong: [],
        wrongCount: 0,
        equalsOther: [],
      });

      // Node sends, page receives.
      const sid2 = new Uint8Array(randomBytes(32));
      const [nodeSent, toPage] = await Promise.all([
        otSender({ transport: node, peer: 0, sessionId: sid2 }).then(async (s) => {
          const out = await s.sendRandom(n);
          s.free();
          return out;
        }),
        receiveRandomInPage(page, sid2, n),
      ]);
      expect(toPage.choices.length).toBe(n);
      expect(badOts(nodeSent.m0, nodeSent.m1, toPage.choices, toPage.messages)).toEqual({
        wrong: [],
        wrongCount: 0,
        equalsOther: [],
      });
      await closeInPage(page);
    } finally {
      await (held.node ?? held.inner)?.close();
    }
    expect(env.browser.problems).toEqual([]);
  }, 60_000);

  it('Chromium↔Chromium: a pinned key that is not the peer\'s fails the handshake on both sides', async () => {
    const [a, b] = env.pages as [Page, Page];
    const room = `ot-bad-${randomBytes(6).toString('hex')}`;
    const identities = await Promise.all([generateIdentity(), generateIdentity()]);
    const stranger = await generateIdentity();
    const forB = await identityFor(identities, 1);
    // Page b expects party 0 to hold the stranger's key.
    forB.peers[0] = b64(stranger.publicKey);
    const [ca, cb] = await Promise.all([
      connectSecureInPage(a, env.signaling.url, room, 0, await identityFor(identities, 0)),
      connectSecureInPage(b, env.signaling.url, room, 1, forB),
    ]);
    expect(ca).toMatchObject({ ok: false, code: 'AUTHENTICATION_FAILED' });
    expect(cb).toMatchObject({ ok: false, code: 'AUTHENTICATION_FAILED' });
    expect(env.browser.problems).toEqual([]);
  }, 60_000);
});
