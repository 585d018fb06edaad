// Client–server MPC with browser clients: 3 compute parties in Node (serve, listening for clients
// on WebSockets), 200 clients — 50 in two Chromium pages (the published `webmpc/clients` entry,
// dialing with the page's WebSocket) and 150 in Node — each giving one 16-bit value. Every client
// gets the sum and the sum of squares (MASCOT among the servers) or the Vickrey auction of the
// values (authgc), checked against BigInt.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryTransports, init } from '../../dist/index.js';
import { serve, submit, dialServer, type SubmitResult } from '../../dist/clients.js';
import { listenForClients } from '../../dist/net/node.js';
import { vickreyClientsCircuit } from '../../dist/circuit/index.js';
import { ProgramBuilder, vickreyReference } from '../../dist/program/index.js';
import { generateIdentity, publicKeyToHex } from '../../dist/secure/index.js';
import { skipBrowserTests } from './chromium.js';
import { openSdkPages, type SdkPages } from './sdk-page.js';

declare global {
  interface Window {
    submitMany(urls: string[], keys: string[], sessionId: string, values: number[]): Promise<{ outputs: string[]; index: number }[]>;
  }
}

/** Installed in each page: submits every value as its own client, concurrently. */
const BIDDERS = `
  const clients = await import('/dist/clients.js');
  const { secure } = window.sdk;
  window.submitMany = async (urls, keys, sessionId, values) => {
    const servers = urls.map((url, j) => ({ publicKey: secure.publicKeyFromHex(keys[j]), connect: () => clients.dialServer(url) }));
    // Bidders arrive a few at a time, as people do: each frees its place once every server took it.
    let free = 8;
    const waiting = [];
    const enter = () => (free > 0 ? (free--, Promise.resolve()) : new Promise((r) => waiting.push(r)));
    const leave = () => (waiting.length ? waiting.shift()() : free++);
    const results = await Promise.all(values.map(async (v) => {
      await enter();
      let left = false;
      const release = () => { if (!left) { left = true; leave(); } };
      try {
        return await clients.submit({ servers, sessionId, input: v, onProgress: (p) => p.phase === 'window' && release() });
      } finally {
        release();
      }
    }));
    return results.map((r) => ({ outputs: r.outputs.map(String), index: r.index }));
  };
`;

const SERVERS = 3;
const BITS = 16;

describe.skipIf(skipBrowserTests())('client–server MPC with Chromium clients', () => {
  let env: SdkPages;

  beforeAll(async () => {
    await init();
    env = await openSdkPages('webmpc clients');
    for (const page of env.pages) {
      await page.addScriptTag({ type: 'module', content: BIDDERS });
      await page.waitForFunction(() => typeof window.submitMany === 'function', undefined, { timeout: 30_000 });
    }
  }, 120_000);

  afterAll(async () => {
    await env?.close();
  });

  /**
   * 200 clients (50 from the two pages, 150 from Node) against 3 servers running `what`; every
   * client's and server's outputs must be `want(values by slot)`.
   */
  async function twoHundred(sessionId: string, what: Record<string, unknown>, want: (bySlot: bigint[]) => bigint[]): Promise<void> {
    const values = Array.from({ length: 200 }, (_, i) => (i * 7919 + 13) % 2 ** BITS);
    const identities = await Promise.all(Array.from({ length: SERVERS }, () => generateIdentity()));
    const listeners = await Promise.all(identities.map(() => listenForClients({ port: 0 })));
    const mesh = createMemoryTransports(SERVERS);
    const servers = Promise.all(
      mesh.map((transport, j) =>
        serve({ transport: transport!, identity: identities[j]!, clients: listeners[j]!, sessionId, input: { type: 'unsigned', bits: BITS }, ...what, window: { count: values.length, closeAfterMs: 120_000 } }),
      ),
    );
    const urls = listeners.map((l) => l.url);
    const keys = identities.map((id) => publicKeyToHex(id.publicKey));
    const inPages = [values.slice(0, 25), values.slice(25, 50)].map((vs, p) => env.pages[p]!.evaluate(([u, k, id, vals]) => window.submitMany(u, k, id, vals), [urls, keys, sessionId, vs] as [string[], string[], string, number[]]));
    const endpoints = identities.map((id, j) => ({ publicKey: id.publicKey, connect: () => dialServer(urls[j]!) }));
    // Node bidders arrive 16 at a time too (each frees its place once every server took it).
    let free = 16;
    const waiting: (() => void)[] = [];
    const enter = () => (free > 0 ? (free--, Promise.resolve()) : new Promise<void>((r) => waiting.push(r)));
    const leave = () => (waiting.length ? waiting.shift()!() : free++);
    const inNode: Promise<SubmitResult>[] = values.slice(50).map(async (v) => {
      await enter();
      let left = false;
      const release = () => {
        if (!left) (left = true), leave();
      };
      try {
        return await submit({ servers: endpoints, sessionId, input: v, onProgress: (p) => void (p.phase === 'window' && release()) });
      } finally {
        release();
      }
    });
    const [pageResults, nodeResults, serverResults] = await Promise.all([Promise.all(inPages), Promise.all(inNode), servers]);
    const bySlot: bigint[] = [];
    pageResults.flat().forEach((r, k) => (bySlot[r.index] = BigInt(values[k]!)));
    nodeResults.forEach((r, k) => (bySlot[r.index] = BigInt(values[50 + k]!)));
    expect(Object.keys(bySlot)).toHaveLength(200);
    const outputs = want(bySlot);
    for (const r of pageResults.flat()) expect(r.outputs).toEqual(outputs.map(String));
    for (const r of nodeResults) expect(r.outputs).toEqual(outputs);
    for (const s of serverResults) expect(s.outputs).toEqual(outputs);
    expect(env.browser.problems).toEqual([]);
    await Promise.all(listeners.map((l) => l.close()));
  }

  it('200 clients (50 from two pages, 150 from Node) against 3 MASCOT servers: every client gets Σx and Σx²', async () => {
    const program = (n: number) => {
      const b = new ProgramBuilder({ parties: SERVERS });
      let sum = b.constant(0);
      let squares = b.constant(0);
      for (let i = 0; i < n; i++) {
        const x = b.uint('client', BITS);
        sum = sum.add(x);
        squares = squares.add(x.mul(x));
      }
      b.output(sum);
      b.output(squares);
      return b.build();
    };
    await twoHundred('two-hundred', { program }, (xs) => [xs.reduce((a, v) => a + v, 0n), xs.reduce((a, v) => a + v * v, 0n)]);
  }, 300_000);

  it('200 clients (50 from two pages, 150 from Node) against 3 authgc servers: every client gets the Vickrey auction of their bids', async () => {
    const circuit = (n: number) => vickreyClientsCircuit({ clients: n, bits: BITS });
    await twoHundred('two-hundred-authgc', { protocol: 'authgc', circuit }, (xs) => {
      const { winner, price } = vickreyReference(xs);
      return [BigInt(winner), price];
    });
  }, 300_000);
});

// The demo app's servers mode: a page opened with the link `npm run demo -- --servers S
// --page-bidders K` prints joins an auction that `webmpc serve` processes run, places its bid
// through the app's form and shows the result the scripted bidders got.
describe.skipIf(skipBrowserTests())("the auction app's servers mode (Chromium page + webmpc serve processes)", () => {
  it('a page joins 3 compute parties (authgc among them, the demo default) and 2 scripted bidders through the link and shows the same winner and price', async () => {
    const { execFile } = await import('node:child_process');
    const { join } = await import('node:path');
    const { ROOT } = await import('../helpers.js');
    const { serveStatic } = await import('../../scripts/lib/static-server.mjs');
    const { serversAuction } = await import('../../scripts/lib/servers-demo.mjs');
    const { launch } = await import('./chromium.js');
    await new Promise<void>((resolve, reject) =>
      execFile(process.execPath, [join(ROOT, 'scripts/demo.mjs'), '--skip-build', '--build-only'], { cwd: ROOT }, (err, _o, stderr) =>
        err ? reject(new Error(`building the app failed: ${stderr}`)) : resolve(),
      ),
    );
    const web = await serveStatic({ '/': join(ROOT, 'demo-app/dist/web') }, {});
    const browser = await launch();
    try {
      let opened: Promise<unknown> | undefined;
      const run = serversAuction({
        root: ROOT,
        servers: 3,
        bids: [1000n, 3000n],
        protocol: 'authgc',
        timeoutS: 240,
        extraClients: 1,
        onListening: ({ urls, keys, session }) => {
          const link = `${web.url}/?${new URLSearchParams({ servers: urls.join(','), keys: keys.join(','), session })}`;
          opened = (async () => {
            await browser.page.goto(link);
            await browser.page.fill('#bid', '2000');
            await browser.page.click('#bid-button');
          })();
        },
      });
      const r = await run;
      await opened;
      await browser.page.waitForFunction(() => window.auctionState?.status === 'done' || window.auctionState?.status === 'failed', undefined, { timeout: 60_000 });
      const state = await browser.page.evaluate(() => window.auctionState);
      expect(state.status, JSON.stringify(state.error)).toBe('done');
      expect(r.errors.filter(Boolean).map(String)).toEqual([]);
      // The winner bid 3000 and pays the page's 2000.
      const [winner, price] = r.clients[0]!.outputs;
      expect(price).toBe(2000n);
      expect(r.clients[1]!.index).toBe(Number(winner));
      expect(state.result?.winner).toBe(Number(winner));
      expect(state.result?.price).toBe(2000);
      expect(state.seat).not.toBe(Number(winner));
      expect(browser.problems.join('\n')).toBe('');
    } finally {
      await browser.close();
      await web.close();
    }
  }, 300_000);
});
