// Shared by the browser tests that run the whole SDK in Chromium pages (OT and 2PC over WebRTC):
// the page that loads the SDK as plain ESM (libsodium through an import map), and small helpers.
import { join } from 'node:path';
import { startSignalingServer } from '../../dist/net/node.js';
import { serveStatic, type StaticServer } from '../../scripts/lib/static-server.mjs';
import { DIST, ROOT } from '../helpers.js';
import { launch, type Browser } from './chromium.js';

export type Page = Browser['page'];

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
  }
}

export const b64 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
export const unb64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));

/** Records a page's console errors/warnings and uncaught errors the way launch() does for its first page. */
export function watch(page: Page, problems: string[]): void {
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning') {
      problems.push(`${msg.type()}: ${msg.text()} (${msg.location().url})`);
    }
  });
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
}

/** Two Chromium pages with the SDK loaded, a static server and a signaling server. */
export interface SdkPages {
  server: StaticServer;
  signaling: import('../../dist/net/node.js').SignalingServer;
  browser: Browser;
  pages: [Page, Page];
  close(): Promise<void>;
}

/**
 * Serves `dist/` and libsodium, starts a signaling server, launches Chromium and loads the
 * {@link sdkPage} titled `title` in two pages (console problems of both are recorded).
 */
export async function openSdkPages(title: string): Promise<SdkPages> {
  const server = await serveStatic(
    {
      '/dist/': DIST,
      [SODIUM_WRAPPERS]: join(ROOT, 'node_modules/libsodium-wrappers/'),
      [SODIUM]: join(ROOT, 'node_modules/libsodium/'),
    },
    { '/': sdkPage(title) },
  );
  const signaling = await startSignalingServer({ port: 0 });
  const browser = await launch();
  const close = async () => {
    await browser.close();
    await signaling.close();
    await server.close();
  };
  try {
    const second = await browser.page.context().newPage();
    watch(second, browser.problems);
    const pages: [Page, Page] = [browser.page, second];
    for (const page of pages) {
      await page.goto(`${server.url}/`);
      await page.waitForFunction(() => window.sdkStatus !== undefined, undefined, { timeout: 30_000 });
      const status = await page.evaluate(() => window.sdkStatus);
      if (!status?.ok) throw new Error(`the SDK failed to load in the page: ${status?.error}`);
    }
    return { server, signaling, browser, pages, close };
  } catch (err) {
    await close();
    throw err;
  }
}
