// Shared by the browser tests that run the whole SDK in pages of each engine (OT and 2PC over
// WebRTC, or over the relay where the engine has no WebRTC): the page that loads the SDK as plain
// ESM (libsodium through an import map), and small helpers.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import * as net from '../../dist/net/node.js';
import { startSignalingServer } from '../../dist/net/node.js';
import { serveStatic, type StaticServer } from '../../scripts/lib/static-server.mjs';
import { DIST, ROOT } from '../helpers.js';
import { ENGINE_NAMES, SUPPORTS, launch, type Engine, type EngineBrowser, type EnginePage } from './engines.js';

export type Page = EnginePage;
export { watch } from '../../scripts/lib/chromium.mjs';

/**
 * How a party's page reaches the others: a WebRTC mesh, or the signaling server's relay (for an
 * engine without WebRTC). In both cases the secure channel runs on top.
 */
export type Via = 'webrtc' | 'relay';

/** The way `engine`'s pages connect: WebRTC where the engine has it, else the relay. */
export function viaFor(engine: Engine): Via {
  return SUPPORTS[engine].webrtc ? 'webrtc' : 'relay';
}

/** Where a party connects: the signaling server (WebRTC) or its relay. */
export interface Meeting {
  via: Via;
  signalingUrl: string;
  room: string;
}

/** In Node: the same choice (node-datachannel or the relay over `ws`). */
export function connectNode(m: Meeting, party: number, parties: number, extra: { recvTimeoutMs?: number; peerTimeoutMs?: number } = {}) {
  return m.via === 'relay'
    ? net.connectNodeRelay({ url: `${m.signalingUrl}/relay`, room: m.room, party, parties, connectTimeoutMs: 30_000, ...extra })
    : net.connectNodeMesh({ signalingUrl: m.signalingUrl, room: m.room, party, parties, connectTimeoutMs: 30_000, ...extra });
}

/**
 * The page's side of {@link connectNode}, installed by {@link sdkPage} as \`window.connectParty\`
 * (in-page functions shipped through evaluate must not call helpers of this file).
 */
const CONNECT_PARTY = `
  window.connectParty = (m, party, parties, extra = {}) =>
    m.via === 'relay'
      ? window.sdk.net.connectRelay({ url: m.signalingUrl + '/relay', room: m.room, party, parties, connectTimeoutMs: 30000, ...extra })
      : window.sdk.net.connectMesh({ signalingUrl: m.signalingUrl, room: m.room, party, parties, connectTimeoutMs: 30000, ...extra });
`;

export const SODIUM_WRAPPERS = '/node_modules/libsodium-wrappers/';
export const SODIUM = '/node_modules/libsodium/';

/**
 * A page that imports `dist/index.js`, `dist/net/index.js` and `dist/secure/index.js`, initialises
 * the Wasm module and leaves them on `window.sdk` (and the outcome on `window.sdkStatus`). The
 * libsodium ESM entries are the "import" conditions of the two packages' exports maps.
 */
export function sdkPage(title: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title>
<link rel="icon" href="data:,">
<script type="importmap">{ "imports": {
  "libsodium-wrappers": "${SODIUM_WRAPPERS}dist/modules-esm/libsodium-wrappers.mjs",
  "libsodium": "${SODIUM}dist/modules-esm/libsodium.mjs"
} }</script>
<script type="module">
  try {
    const [webmpc, net, secure] = await Promise.all([
      import('/dist/index.js'), import('/dist/net/index.js'), import('/dist/secure/index.js'),
    ]);
    await webmpc.init();
    window.sdk = { webmpc, net, secure };
    ${CONNECT_PARTY}
    window.sdkStatus = { ok: true };
  } catch (e) {
    window.sdkStatus = { ok: false, error: String((e && e.stack) || e) };
  }
</script></head><body>${title}</body></html>`;
}

export type Sdk = {
  webmpc: typeof import('../../dist/index.js');
  net: typeof import('../../dist/net/index.js');
  secure: typeof import('../../dist/secure/index.js');
};

declare global {
  interface Window {
    sdk: Sdk;
    sdkStatus?: { ok: boolean; error?: string };
    connectParty(
      m: Meeting,
      party: number,
      parties: number,
      extra?: { recvTimeoutMs?: number; peerTimeoutMs?: number },
    ): Promise<import('../../dist/net/index.js').Transport>;
  }
}

export const b64 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
export const unb64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));

/** Two pages of one engine with the SDK loaded, a static server and a signaling server (with its relay). */
export interface SdkPages {
  engine: Engine;
  /** 'Chromium', 'Firefox', 'WebKitGTK': for test names and logs. */
  name: string;
  /** How this engine's pages connect (see {@link viaFor}). */
  via: Via;
  server: StaticServer;
  signaling: import('../../dist/net/node.js').SignalingServer;
  browser: EngineBrowser;
  pages: [Page, Page];
  /** A meeting in a fresh room named after `tag`, the way this engine connects. */
  meeting(tag: string): Meeting;
  close(): Promise<void>;
}

/**
 * Serves `dist/` and libsodium, starts a signaling server (and relay), launches `engine` and
 * loads the {@link sdkPage} titled `title` in two pages (console problems of both are recorded).
 */
export async function openSdkPages(title: string, engine: Engine = 'chromium'): Promise<SdkPages> {
  const server = await serveStatic(
    {
      '/dist/': DIST,
      [SODIUM_WRAPPERS]: join(ROOT, 'node_modules/libsodium-wrappers/'),
      [SODIUM]: join(ROOT, 'node_modules/libsodium/'),
    },
    { '/': sdkPage(title) },
  );
  const signaling = await startSignalingServer({ port: 0, relay: true });
  let browser: EngineBrowser;
  try {
    browser = await launch(engine);
  } catch (err) {
    await signaling.close();
    await server.close();
    throw err;
  }
  const close = async () => {
    await browser.close();
    await signaling.close();
    await server.close();
  };
  try {
    const pages: [Page, Page] = [browser.page, await browser.newPage()];
    for (const page of pages) await loadSdk(page, server.url);
    const via = viaFor(engine);
    const meeting = (tag: string): Meeting => ({ via, signalingUrl: signaling.url, room: `${tag}-${randomBytes(6).toString('hex')}` });
    return { engine, name: ENGINE_NAMES[engine], via, server, signaling, browser, pages, meeting, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Loads the {@link sdkPage} served at `url` in `page` and waits for the SDK to be up. */
export async function loadSdk(page: Page, url: string): Promise<void> {
  await page.goto(`${url}/`);
  await page.waitForFunction(() => window.sdkStatus !== undefined, undefined, { timeout: 30_000 });
  const status = await page.evaluate(() => window.sdkStatus);
  if (!status?.ok) throw new Error(`the SDK failed to load in the page: ${status?.error}`);
}
