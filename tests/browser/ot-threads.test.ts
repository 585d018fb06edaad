// OT extension in parallel instances in Chromium: both parties in one page over in-memory
// transports, `threads: 2` (each instance in a module Web Worker), random OT and Δ-OT checked OT
// by OT in the page; every worker ended once the OT objects are closed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skipBrowserTests } from './chromium.js';
import { openSdkPages, type SdkPages } from './sdk-page.js';

interface Checked {
  randomWrong: number;
  cotWrong: number;
  liveWorkersDuring: number;
  liveWorkersAfter: number;
}

declare global {
  interface Window {
    otThreads(k: number, n: number): Promise<Checked>;
  }
}

/** Installed in the page as a module script of its own: `otThreads(k, n)`. */
const CHECK = `
  const { webmpc } = window.sdk;
  const workerHost = await import('/dist/engine/worker-host.js');
  const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
  window.otThreads = async (k, n) => {
    const [a, b] = webmpc.createMemoryTransports(2, { recvTimeoutMs: 60000 });
    const sessionId = crypto.getRandomValues(new Uint8Array(32));
    const [s, r] = await Promise.all([
      webmpc.otSender({ transport: a, peer: 1, sessionId, threads: k }),
      webmpc.otReceiver({ transport: b, peer: 0, sessionId, threads: k }),
    ]);
    const liveWorkersDuring = workerHost._liveEngineWorkers();
    const [{ m0, m1 }, got] = await Promise.all([s.sendRandom(n), r.receiveRandom(n)]);
    let randomWrong = 0;
    for (let j = 0; j < n; j++) {
      const want = (got.choices[j] ? m1 : m0).subarray(16 * j, 16 * j + 16);
      const other = (got.choices[j] ? m0 : m1).subarray(16 * j, 16 * j + 16);
      const mine = got.messages.subarray(16 * j, 16 * j + 16);
      if (!same(mine, want) || same(mine, other)) randomWrong++;
    }
    const c = got.choices.slice(); // random bits (getRandomValues takes at most 64 KiB)
    const delta = s.delta;
    const [keys, macs] = await Promise.all([s.sendCot(n), r.receiveCot(c)]);
    let cotWrong = 0;
    for (let j = 0; j < n; j++) {
      const key = keys.subarray(16 * j, 16 * j + 16);
      const want = c[j] ? key.map((x, i) => x ^ delta[i]) : key;
      if (!same(macs.subarray(16 * j, 16 * j + 16), want)) cotWrong++;
    }
    await Promise.all([s.close(), r.close()]);
    return { randomWrong, cotWrong, liveWorkersDuring, liveWorkersAfter: workerHost._liveEngineWorkers() };
  };
`;

describe.skipIf(skipBrowserTests())('OT extension with threads (Chromium)', () => {
  let env: SdkPages;

  beforeAll(async () => {
    env = await openSdkPages('webmpc ot threads');
    const page = env.pages[0];
    await page.addScriptTag({ type: 'module', content: CHECK });
    await page.waitForFunction(() => typeof window.otThreads === 'function', undefined, { timeout: 30_000 });
  }, 120_000);

  afterAll(async () => {
    await env?.close();
  });

  it('threads 2: every random OT and Δ-OT correct across the chunks; the workers end with close()', async () => {
    const out = await env.pages[0].evaluate(() => window.otThreads(2, 70_001));
    expect(out).toEqual({ randomWrong: 0, cotWrong: 0, liveWorkersDuring: 4, liveWorkersAfter: 0 });
    expect(env.browser.problems).toEqual([]);
  }, 180_000);
});
