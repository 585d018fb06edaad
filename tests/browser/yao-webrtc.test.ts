// Yao 2PC (session.run, protocol yao2pc) in Chromium over WebRTC inside pinned secure channels:
// Chromium↔Chromium (two pages) and Chromium↔Node, AES-128 from the SDK's own circuit builder
// (aes128Circuit) on both sides, the FIPS-197 C.1 vector expected by both parties. The pages load
// the compiled SDK as plain ESM from the static server, libsodium through an import map.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { circuit as circuits, init, session } from '../../dist/index.js';
import * as net from '../../dist/net/node.js';
import { exportIdentitySecret, generateIdentity, secureTransport, type Identity, type SecureTransport } from '../../dist/secure/index.js';
import { hex, unhex } from '../helpers.js';
import { skipBrowserTests } from './chromium.js';
import { b64, openSdkPages, type Page, type SdkPages } from './sdk-page.js';

const KEY = '000102030405060708090a0b0c0d0e0f';
const PT = '00112233445566778899aabbccddeeff';
const CT = '69c4e0d86a7b0430d8cdb78070b4c55a';

/**
 * In the page: joins the mesh, runs the pinned secure handshake, opens a session and runs
 * AES-128 (built in the page with aes128Circuit) with `input` as this party's value. Returns the
 * outputs as hex, or the error's code and message; always closes the transport.
 */
function aesInPage(page: Page, signalingUrl: string, room: string, party: number, seed: string, peers: string[], input: string) {
  return page.evaluate(
    async ({ signalingUrl, room, party, seed, peers, input }) => {
      const bytes = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
      const fromHex = (s: string) => Uint8Array.from(s.match(/../g)!, (h) => parseInt(h, 16));
      const toHex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
      const { webmpc, net, secure } = window.sdk;
      const identity = await secure.importIdentitySecret(bytes(seed));
      const inner = await net.connectMesh({ signalingUrl, room, party, parties: 2, connectTimeoutMs: 30_000 });
      let transport: import('../../dist/secure/index.js').SecureTransport | undefined;
      try {
        transport = await secure.secureTransport(inner, { identity, sessionId: room, trust: 'pinned', peers: peers.map(bytes) });
        const s = await webmpc.session({ transport, party, parties: 2 });
        const aes = webmpc.circuit.aes128Circuit();
        const t0 = performance.now();
        const out = await s.run(aes, { inputs: [fromHex(input)], protocol: 'yao2pc' });
        const ms = performance.now() - t0;
        s.free();
        return { ok: true as const, outputs: out.map((v) => (v ? toHex(v) : null)), ms };
      } catch (e) {
        const err = e as { code?: string; message?: string };
        return { ok: false as const, code: err.code, message: String(err.message) };
      } finally {
        await (transport ?? inner).close();
      }
    },
    { signalingUrl, room, party, seed, peers, input },
  );
}

async function keysFor(identities: Identity[], party: number): Promise<[string, string[]]> {
  return [b64(await exportIdentitySecret(identities[party]!)), identities.map((id) => b64(id.publicKey))];
}

describe.skipIf(skipBrowserTests())('yao2pc over WebRTC in Chromium', () => {
  let env: SdkPages;

  beforeAll(async () => {
    await init();
    env = await openSdkPages('webmpc yao2pc over WebRTC');
  }, 120_000);

  afterAll(async () => {
    await env?.close();
  });

  it('Chromium↔Chromium: AES-128 gives the FIPS-197 vector on both pages', async () => {
    const [a, b] = env.pages as [Page, Page];
    const room = `yao-c2c-${randomBytes(6).toString('hex')}`;
    const identities = await Promise.all([generateIdentity(), generateIdentity()]);
    const [ra, rb] = await Promise.all([
      aesInPage(a, env.signaling.url, room, 0, ...(await keysFor(identities, 0)), KEY),
      aesInPage(b, env.signaling.url, room, 1, ...(await keysFor(identities, 1)), PT),
    ]);
    expect(ra).toMatchObject({ ok: true, outputs: [CT] });
    expect(rb).toMatchObject({ ok: true, outputs: [CT] });
    console.log(`Chromium↔Chromium AES-128 yao2pc (base OTs included): ${(ra as { ms: number }).ms.toFixed(0)} ms`);
    expect(env.browser.problems).toEqual([]);
  }, 60_000);

  it('Chromium↔Node: AES-128 with the page garbling (key) and Node evaluating (plaintext), FIPS vector on both', async () => {
    const page = env.pages[1]!;
    const room = `yao-c2n-${randomBytes(6).toString('hex')}`;
    const identities = await Promise.all([generateIdentity(), generateIdentity()]);
    const held: { inner?: net.Transport; secure?: SecureTransport } = {};
    try {
      const [inPage, inNode] = await Promise.all([
        aesInPage(page, env.signaling.url, room, 0, ...(await keysFor(identities, 0)), KEY),
        (async () => {
          held.inner = await net.connectNodeMesh({ signalingUrl: env.signaling.url, room, party: 1, parties: 2, connectTimeoutMs: 30_000 });
          held.secure = await secureTransport(held.inner, {
            identity: identities[1]!,
            sessionId: room,
            trust: 'pinned',
            peers: identities.map((id) => id.publicKey),
          });
          const s = await session({ transport: held.secure, party: 1, parties: 2 });
          try {
            return await s.run(circuits.aes128Circuit(), { inputs: [unhex(PT)], protocol: 'yao2pc' });
          } finally {
            s.free();
          }
        })(),
      ]);
      expect(inPage).toMatchObject({ ok: true, outputs: [CT] });
      expect(inNode.map((v) => hex(v!))).toEqual([CT]);
    } finally {
      await (held.secure ?? held.inner)?.close();
    }
    expect(env.browser.problems).toEqual([]);
  }, 60_000);
});
