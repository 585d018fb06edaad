// The published package inside an app built with Vite, the bundler most web apps use: once as a
// production build served as static files, once through Vite's dev server (which pre-bundles
// dependencies and rewrites their asset URLs, a classic way to lose a .wasm file).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createLogger, createServer, type Logger } from 'vite';
import { ROOT, packInto } from '../helpers.js';
import { launch, skipBrowserTests, type Browser } from './chromium.js';
import { serveStatic } from '../../scripts/lib/static-server.mjs';

const INDEX = `<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="module" src="./main.js"></script></head><body>vite app</body></html>`;

// `?preload=mascot&preload=teleport` also loads those modules at init (it is otherwise fetched only when a
// protocol needing it first runs), which shows the bundler emitted it where the SDK looks.
const MAIN = `import { init, aesEncrypt, backendName } from 'webmpc';
const h = (s) => Uint8Array.from(s.match(/../g).map((b) => parseInt(b, 16)));
const s = (b) => Array.from(b, (v) => v.toString(16).padStart(2, '0')).join('');
const preload = new URLSearchParams(location.search).getAll('preload');
init({ preload }).then(
  () => {
    window.result = {
      ok: true,
      backend: backendName(),
      ct: s(aesEncrypt(h('000102030405060708090a0b0c0d0e0f'), h('00112233445566778899aabbccddeeff'))),
    };
  },
  (e) => { window.result = { ok: false, error: String((e && e.stack) || e) }; },
);
`;

declare global {
  interface Window {
    result?: { ok: boolean; backend?: string; ct?: string; error?: string };
  }
}

function recordingLogger(warnings: string[]): Logger {
  const logger = createLogger('warn', { allowClearScreen: false });
  logger.warn = (msg) => void warnings.push(msg);
  logger.warnOnce = (msg) => void warnings.push(msg);
  logger.error = (msg) => void warnings.push(`error: ${msg}`);
  return logger;
}

async function runPage(browser: Browser, url: string): Promise<NonNullable<Window['result']>> {
  await browser.page.goto(url);
  await browser.page.waitForFunction(() => window.result !== undefined, undefined, { timeout: 30_000 });
  return (await browser.page.evaluate(() => window.result))!;
}

const VITE = createRequire(join(ROOT, 'package.json')).resolve('vite');

const EXPECTED = { ok: true, ct: '69c4e0d86a7b0430d8cdb78070b4c55a' };

/** The package's Wasm modules: the main one first, then those loaded on first use. */
const WASM_MODULES = ['webmpc', 'webmpc_mascot', 'webmpc_teleport'];

/** The module a requested asset path is (`/assets/webmpc_teleport_bg-1a2b3c.wasm` → `webmpc_teleport`). */
function moduleOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1).replace(/_bg-[^/]*\.wasm$/, '');
}

describe.skipIf(skipBrowserTests())('under Vite', () => {
  let scratch: string;
  let app: string;
  let browser: Browser;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'webmpc-vite-'));
    app = packInto(scratch).app;
    writeFileSync(join(app, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    writeFileSync(join(app, 'index.html'), INDEX);
    writeFileSync(join(app, 'main.js'), MAIN);
    browser = await launch();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('production build: emits the .wasm as an asset, builds without warnings, runs', async () => {
    // In a child process: under the test runner NODE_ENV is 'test', and Vite then keeps quiet
    // about things it would warn an app developer about (such as externalised Node modules).
    const outDir = join(scratch, 'out');
    const script = join(scratch, 'vite-build.mjs');
    writeFileSync(
      script,
      `import { build, createLogger } from ${JSON.stringify(pathToFileURL(VITE).href)};
const warnings = [];
const logger = createLogger('warn', { allowClearScreen: false });
logger.warn = (m) => warnings.push(m);
logger.warnOnce = (m) => warnings.push(m);
logger.error = (m) => warnings.push('error: ' + m);
await build({ root: ${JSON.stringify(app)}, configFile: false, logLevel: 'warn', customLogger: logger,
  build: { outDir: ${JSON.stringify(outDir)}, emptyOutDir: true } });
console.log(JSON.stringify(warnings));
`,
    );
    const out = execFileSync(process.execPath, [script], {
      cwd: app,
      encoding: 'utf8',
      env: { ...process.env, NODE_ENV: 'production' },
    });
    expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual([]);
    // Every module is emitted as an asset of its own (Vite names them <name>-<hash>.wasm).
    const assets = readdirSync(join(outDir, 'assets')).filter((f) => f.endsWith('.wasm'));
    for (const module of WASM_MODULES) expect(assets.filter((f) => f.startsWith(`${module}_bg-`)), module).toHaveLength(1);
    const server = await serveStatic({ '/': outDir });
    try {
      const result = await runPage(browser, `${server.url}/`);
      expect(result).toMatchObject(EXPECTED);
      expect(server.requests.filter((p) => p.endsWith('.wasm')).map(moduleOf)).toEqual(['webmpc']);
      expect(browser.problems).toEqual([]);
      // The protocol modules load from where the build put them.
      server.requests.length = 0;
      const preloaded = await runPage(browser, `${server.url}/?${WASM_MODULES.slice(1).map((m) => `preload=${m.slice('webmpc_'.length)}`).join('&')}`);
      expect(preloaded).toMatchObject(EXPECTED);
      // (The main module may come from the browser's cache this time.)
      const fetched = server.requests.filter((p) => p.endsWith('.wasm')).map(moduleOf);
      for (const module of WASM_MODULES.slice(1)) expect(fetched).toContain(module);
      expect(browser.problems).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('dev server: loads and runs', async () => {
    const warnings: string[] = [];
    browser.problems.length = 0;
    const server = await createServer({
      root: app,
      configFile: false,
      logLevel: 'warn',
      customLogger: recordingLogger(warnings),
      server: { host: '127.0.0.1', port: 0 },
    });
    await server.listen();
    try {
      const url = server.resolvedUrls?.local[0];
      if (!url) throw new Error('vite dev server has no local URL');
      const result = await runPage(browser, url);
      expect(result).toMatchObject(EXPECTED);
      const preloaded = await runPage(browser, `${url}?${WASM_MODULES.slice(1).map((m) => `preload=${m.slice('webmpc_'.length)}`).join('&')}`);
      expect(preloaded).toMatchObject(EXPECTED);
      expect(browser.problems).toEqual([]);
      expect(warnings).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
