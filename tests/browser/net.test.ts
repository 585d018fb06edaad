// WebRTC data channels in Chromium: Chromium↔Chromium (two tabs) and Chromium↔Node
// (node-datachannel), introduced by the signaling server on localhost. The page loads the
// compiled dist/net/index.js as plain ESM, so this also proves the browser-side modules import
// nothing from Node. Messages are checked by SHA-256: crypto.subtle in the page, node:crypto here.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as net from '../../dist/net/node.js';
import { DIST } from '../helpers.js';
import { launch, skipBrowserTests, type Browser } from './chromium.js';
import { serveStatic, type StaticServer } from '../../scripts/lib/static-server.mjs';

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>webmpc net test</title>
<link rel="icon" href="data:,">
<script type="module">
  try {
    window.net = await import('/dist/net/index.js');
    window.netStatus = { ok: true };
  } catch (e) {
    window.netStatus = { ok: false, error: String((e && e.stack) || e) };
  }
</script></head><body>webmpc net</body></html>`;

type Page = Browser['page'];
const SIZES = [0, 1, 1000, 65_536, 200_001, 6 * 1024 * 1024 + 3];

declare global {
  interface Window {
    net: typeof import('../../dist/net/index.js');
    netStatus?: { ok: boolean; error?: string };
    t: import('../../dist/net/index.js').Transport;
    sent: Uint8Array[];
  }
}

function sha256(b: Uint8Array): string {
  return createHash('sha256').update(b).digest('hex');
}

/** Joins the mesh from the page; the transport stays on window.t. */
function connectInPage(page: Page, signalingUrl: string, room: string, party: number, parties: number) {
  return page.evaluate(
    async ({ signalingUrl, room, party, parties }) => {
      window.t = await window.net.connectMesh({ signalingUrl, room, party, parties, connectTimeoutMs: 30_000 });
    },
    { signalingUrl, room, party, parties },
  );
}

/** Page sends random messages of `sizes` to `to`; returns their SHA-256 digests. */
function sendFromPage(page: Page, to: number, sizes: number[]) {
  return page.evaluate(
    async ({ to, sizes }) => {
      const hex = (b: ArrayBuffer) => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, '0')).join('');
      const digests: string[] = [];
      for (const n of sizes) {
        const m = new Uint8Array(n);
        for (let i = 0; i < n; i += 65_536) crypto.getRandomValues(m.subarray(i, Math.min(n, i + 65_536)));
        digests.push(hex(await crypto.subtle.digest('SHA-256', m)));
        await window.t.send(to, m);
      }
      return digests;
    },
    { to, sizes },
  );
}

/** Page receives `count` messages from `from`; returns [length, SHA-256] of each. */
function recvInPage(page: Page, from: number, count: number) {
  return page.evaluate(
    async ({ from, count }) => {
      const hex = (b: ArrayBuffer) => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, '0')).join('');
      const out: [number, string][] = [];
      for (let i = 0; i < count; i++) {
        const m = await window.t.recv(from, { timeoutMs: 60_000 });
        out.push([m.byteLength, hex(await crypto.subtle.digest('SHA-256', m as Uint8Array<ArrayBuffer>))]);
      }
      return out;
    },
    { from, count },
  );
}

describe.skipIf(skipBrowserTests())('WebRTC transport in Chromium', () => {
  let server: StaticServer;
  let signaling: net.SignalingServer;
  let browser: Browser;
  let pages: Page[];

  beforeAll(async () => {
    server = await serveStatic({ '/dist/': DIST }, { '/': PAGE });
    signaling = await net.startSignalingServer();
    browser = await launch();
    pages = [browser.page, await browser.page.context().newPage(), await browser.page.context().newPage()];
    for (const page of pages) {
      await page.goto(`${server.url}/`);
      await page.waitForFunction(() => window.netStatus !== undefined, undefined, { timeout: 30_000 });
      const status = await page.evaluate(() => window.netStatus);
      if (!status?.ok) throw new Error(`dist/net failed to load in the page: ${status?.error}`);
    }
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await signaling?.close();
    await server?.close();
  });

  it('loads dist/net as ESM without touching Node-only modules', () => {
    expect(server.requests.some((p) => /server|websocket-mesh|node\.js/.test(p))).toBe(false);
    expect(browser.problems.filter((p) => p.startsWith('pageerror'))).toEqual([]);
  });

  it('Chromium↔Chromium: both directions, up to 6 MiB, SHA-256-checked', async () => {
    const [a, b] = pages as [Page, Page];
    const room = `c2c-${randomBytes(6).toString('hex')}`;
    await Promise.all([connectInPage(a, signaling.url, room, 0, 2), connectInPage(b, signaling.url, room, 1, 2)]);
    const [sentAB, gotAB, sentBA, gotBA] = await Promise.all([
      sendFromPage(a, 1, SIZES),
      recvInPage(b, 0, SIZES.length),
      sendFromPage(b, 0, SIZES),
      recvInPage(a, 1, SIZES.length),
    ]);
    expect(gotAB).toEqual(SIZES.map((n, i) => [n, sentAB[i]]));
    expect(gotBA).toEqual(SIZES.map((n, i) => [n, sentBA[i]]));
    await Promise.all([a, b].map((p) => p.evaluate(() => window.t.close())));
  }, 120_000);

  it('Chromium↔Node: both directions, SHA-256-checked in each runtime', async () => {
    const page = pages[2]!;
    const room = `c2n-${randomBytes(6).toString('hex')}`;
    const [node] = await Promise.all([
      net.connectNodeMesh({ signalingUrl: signaling.url, room, party: 1, parties: 2, connectTimeoutMs: 30_000 }),
      connectInPage(page, signaling.url, room, 0, 2),
    ]);
    try {
      const toPage = SIZES.map((n) => new Uint8Array(randomBytes(n)));
      const sending = (async () => {
        for (const m of toPage) await node.send(0, m);
      })();
      const pageGot = await recvInPage(page, 1, SIZES.length);
      await sending;
      expect(pageGot).toEqual(toPage.map((m) => [m.byteLength, sha256(m)]));

      const pageSent = sendFromPage(page, 1, SIZES);
      const nodeGot: [number, string][] = [];
      for (let i = 0; i < SIZES.length; i++) {
        const m = await node.recv(0, { timeoutMs: 60_000 });
        nodeGot.push([m.byteLength, sha256(m)]);
      }
      const digests = await pageSent;
      expect(nodeGot).toEqual(SIZES.map((n, i) => [n, digests[i]]));

      // The page leaves abruptly: Node's pending recv fails with a typed error, not a hang.
      const pending = node.recv(0, { timeoutMs: 30_000 }).then(
        () => 'resolved',
        (e: { code?: string }) => e.code,
      );
      await page.evaluate(() => window.t.close(new Error('page aborts')));
      expect(await pending).toBe('PEER_DISCONNECTED');
    } finally {
      await node.close();
    }
  }, 120_000);

  it('a tab that closes tells its Node peer at once (pagehide abort), not after the silence timeout', async () => {
    const page = await browser.page.context().newPage();
    await page.goto(`${server.url}/`);
    await page.waitForFunction(() => window.netStatus !== undefined, undefined, { timeout: 30_000 });
    const room = `hide-${randomBytes(6).toString('hex')}`;
    const [node] = await Promise.all([
      // A long silence timeout, so only the page's own abort can explain a quick error.
      net.connectNodeMesh({ signalingUrl: signaling.url, room, party: 1, parties: 2, connectTimeoutMs: 30_000, peerTimeoutMs: 20_000 }),
      connectInPage(page, signaling.url, room, 0, 2),
    ]);
    try {
      await sendFromPage(page, 1, [10]);
      expect((await node.recv(0, { timeoutMs: 30_000 })).byteLength).toBe(10);
      const pending = node.recv(0, { timeoutMs: 30_000 }).then(
        () => ({ code: 'resolved' }) as { code?: string; remote?: { code: string } },
        (e: { code?: string; remote?: { code: string } }) => e,
      );
      const t0 = performance.now();
      await page.close({ runBeforeUnload: true });
      const error = await pending;
      const ms = performance.now() - t0;
      console.log(`closed tab noticed by Node after ${ms.toFixed(0)} ms`);
      expect(error.code).toBe('PEER_DISCONNECTED');
      // The remote cause comes only in the page's abort frame: the news was a message.
      expect(error.remote?.code).toBe('ABORTED');
    } finally {
      await node.close();
    }
  }, 120_000);

  it('3-party mesh of two tabs and Node: every pair exchanges checked messages', async () => {
    const [a, b] = pages as [Page, Page];
    const room = `mix-${randomBytes(6).toString('hex')}`;
    const [node] = await Promise.all([
      net.connectNodeMesh({ signalingUrl: signaling.url, room, party: 2, parties: 3, connectTimeoutMs: 30_000 }),
      connectInPage(a, signaling.url, room, 0, 3),
      connectInPage(b, signaling.url, room, 1, 3),
    ]);
    try {
      const sizes = [100_000, 3];
      const fromNode = sizes.map((n) => new Uint8Array(randomBytes(n)));
      const nodeSends = Promise.all([0, 1].map(async (to) => {
        for (const m of fromNode) await node.send(to, m);
      }));
      const [a1, b0, aGotNode, bGotNode, aSentNode, bSentNode] = await Promise.all([
        sendFromPage(a, 1, sizes),
        sendFromPage(b, 0, sizes),
        recvInPage(a, 2, sizes.length),
        recvInPage(b, 2, sizes.length),
        sendFromPage(a, 2, sizes),
        sendFromPage(b, 2, sizes),
      ]);
      const [bGotA, aGotB] = await Promise.all([recvInPage(b, 0, sizes.length), recvInPage(a, 1, sizes.length)]);
      await nodeSends;
      const expectedFromNode = fromNode.map((m) => [m.byteLength, sha256(m)]);
      expect(aGotNode).toEqual(expectedFromNode);
      expect(bGotNode).toEqual(expectedFromNode);
      expect(bGotA).toEqual(sizes.map((n, i) => [n, a1[i]]));
      expect(aGotB).toEqual(sizes.map((n, i) => [n, b0[i]]));
      for (const [from, digests] of [[0, aSentNode], [1, bSentNode]] as const) {
        for (let i = 0; i < sizes.length; i++) expect(sha256(await node.recv(from))).toBe(digests[i]);
      }
      await Promise.all([a, b].map((p) => p.evaluate(() => window.t.close())));
    } finally {
      await node.close();
    }
  }, 120_000);
});
