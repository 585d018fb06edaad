// The package in a real browser, the way a page without a bundler would use it: dist/ served as
// static files, an import map naming 'webmpc', a module script importing it. Results are compared
// with values computed in Node (OpenSSL for AES, the Node-loaded package for the other kernels,
// which the Node test files check against independent references).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as webmpc from '../../dist/index.js';
import { DIST, hex, nodeAes, rand } from '../helpers.js';
import { launch, skipBrowserTests, type Browser } from './chromium.js';
import { serveStatic, type StaticServer } from '../../scripts/lib/static-server.mjs';

const PAGE = `<!doctype html>
<html>
<head>
<meta charset="utf-8">
<title>webmpc browser test</title>
<link rel="icon" href="data:,">
<script type="importmap">{ "imports": { "webmpc": "/pkg/index.js" } }</script>
<script type="module">
  import * as webmpc from 'webmpc';
  window.webmpc = webmpc;
  try {
    await webmpc.init();
    window.webmpcStatus = { ok: true, backend: webmpc.backendName() };
  } catch (e) {
    window.webmpcStatus = { ok: false, error: String((e && e.stack) || e) };
  }
</script>
</head>
<body>webmpc</body>
</html>`;

declare global {
  interface Window {
    webmpc: typeof webmpc;
    webmpcStatus?: { ok: boolean; backend?: string; error?: string };
  }
}

describe.skipIf(skipBrowserTests())('browser (Debian chromium, no bundler)', () => {
  let server: StaticServer;
  let browser: Browser;
  let page: Browser['page'];

  beforeAll(async () => {
    await webmpc.init();
    server = await serveStatic({ '/pkg/': DIST }, { '/': PAGE });
    browser = await launch();
    page = browser.page;
    await page.goto(`${server.url}/`);
    await page.waitForFunction(() => window.webmpcStatus !== undefined, undefined, { timeout: 30_000 });
    const status = await page.evaluate(() => window.webmpcStatus);
    if (!status?.ok) throw new Error(`webmpc failed to load in the page: ${status?.error}`);
    console.log(`browser: ${await page.evaluate(() => navigator.userAgent)}; webmpc backend: ${status.backend}`);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('loads the .wasm by streaming compile (served as application/wasm), with no console errors', () => {
    expect(server.requests).toContain('/pkg/wasm-gen/webmpc_bg.wasm');
    // wasm-bindgen warns and falls back to a slower path when the MIME type is wrong.
    expect(browser.problems).toEqual([]);
  });

  it('FIPS-197 C.1', async () => {
    const ct = await page.evaluate(() => {
      const h = (s: string) => Uint8Array.from(s.match(/../g)!.map((b) => parseInt(b, 16)));
      const out = window.webmpc.aesEncrypt(h('000102030405060708090a0b0c0d0e0f'), h('00112233445566778899aabbccddeeff'));
      return Array.from(out, (b) => b.toString(16).padStart(2, '0')).join('');
    });
    expect(ct).toBe('69c4e0d86a7b0430d8cdb78070b4c55a');
  });

  it('random inputs: every kernel agrees with Node', async () => {
    const n = 1031; // not a multiple of 8 or 128
    const cols = 1032;
    const input: Record<string, string> = {
      key: hex(rand(16)),
      x: hex(rand(16 * n)),
      t: hex(rand(16 * n)),
      base: hex(rand(16)),
      rows: hex(rand(16 * cols)),
      seed: hex(rand(16)),
    };
    // One table of calls, applied by the page and by Node alike: [kernel, ...arguments], where an
    // argument is the name of a hex input or a number.
    const calls: Record<string, [string, ...(string | number)[]]> = {
      aes: ['aesEncrypt', 'key', 'x'],
      fixed: ['aesFixedKeyEncrypt', 'x'],
      fixedKey: ['fixedKey'],
      cr: ['hashCr', 'x'],
      ccr: ['hashCcr', 'x'],
      sigma: ['sigma', 'x'],
      tccr: ['hashTccr', 'x', 't'],
      counter: ['hashTccrCounter', 'x', 'base'],
      mul: ['gf128Mul', 'x', 't'],
      inner: ['gf128InnerProduct', 'x', 't'],
      t128: ['transpose128xN', 'rows', cols],
      tN: ['transposeNx128', 'rows', cols],
    };
    const got = await page.evaluate(
      ({ input, calls }) => {
        const w = window.webmpc as unknown as Record<string, (...a: unknown[]) => Uint8Array>;
        const h = (s: string) => Uint8Array.from((s.match(/../g) ?? []).map((b) => parseInt(b, 16)));
        const s = (b: Uint8Array) => Array.from(b, (v) => v.toString(16).padStart(2, '0')).join('');
        const out: Record<string, string> = {};
        for (const [name, [kernel, ...args]] of Object.entries(calls)) {
          out[name] = s(w[kernel]!(...args.map((a) => (typeof a === 'number' ? a : h(input[a]!)))));
        }
        out.prg = s(new window.webmpc.Prg(h(input.seed!)).fillBytes(5000));
        return out;
      },
      { input, calls },
    );
    const b = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));
    const node = webmpc as unknown as Record<string, (...a: unknown[]) => Uint8Array>;
    const expected: Record<string, string> = {};
    for (const [name, [kernel, ...args]] of Object.entries(calls)) {
      expected[name] = hex(node[kernel]!(...args.map((a) => (typeof a === 'number' ? a : b(input[a]!)))));
    }
    expected.prg = hex(new webmpc.Prg(b(input.seed!)).fillBytes(5000));
    // AES also against OpenSSL, independently of the Node-loaded package.
    expect(got.aes).toBe(hex(nodeAes(b(input.key!), b(input.x!))));
    expect(got).toEqual(expected);
  });

  it('randomness comes from crypto.getRandomValues and differs per call', async () => {
    const [a, b, c, d] = await page.evaluate(() => {
      const w = window.webmpc;
      const s = (u: Uint8Array) => Array.from(u, (v) => v.toString(16).padStart(2, '0')).join('');
      return [
        s(w.randomBytes(64)),
        s(w.randomBytes(64)),
        s(w.Prg.fromEntropy().fillBytes(32)),
        s(w.Prg.fromEntropy().fillBytes(32)),
      ];
    });
    expect(a).toHaveLength(128);
    expect(a).not.toBe(b);
    expect(c).not.toBe(d);
  });

  it('bad arguments throw typed errors in the page too', async () => {
    const r = await page.evaluate(() => {
      const w = window.webmpc;
      try {
        w.hashTccr(new Uint8Array(32), new Uint8Array(16));
        return { threw: false };
      } catch (e) {
        return {
          threw: true,
          isKernelError: e instanceof w.KernelError,
          isWebmpcError: e instanceof w.WebmpcError,
          code: (e as { code?: string }).code,
        };
      }
    });
    expect(r).toEqual({ threw: true, isKernelError: true, isWebmpcError: true, code: 'LENGTH_MISMATCH' });
  });
});
