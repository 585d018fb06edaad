// The browser examples against the packed package, installed with npm into an empty project as
// a user would: examples/vite/ built with Vite, and examples/import-map/ served as plain files,
// both loaded in Debian chromium, then in Firefox ESR and WebKitGTK. Also: what a page sees when its server answers the .wasm URL
// with the app's HTML page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../helpers.js';
import { installInto, pack } from '../package-pack.js';
import { launch, skipBrowserTests, type Browser } from './chromium.js';
import { ENGINE_NAMES, launch as launchEngine, skipEngine, type EnginePage } from './engines.js';
import { serveStatic } from '../../scripts/lib/static-server.mjs';

interface PageResult {
  ok: boolean;
  aliceIsRicher?: boolean;
  key?: string;
  error?: string;
}

/** What the example pages leave in `window.result` (typed here, not as a global, to stay out of other tests' way). */
const pageResult = () => (window as unknown as { result?: PageResult }).result;

const VITE = createRequire(join(ROOT, 'package.json')).resolve('vite');

async function runPage(browser: { page: EnginePage }, url: string): Promise<PageResult> {
  await browser.page.goto(url);
  await browser.page.waitForFunction(`(${pageResult.toString()})() !== undefined`, undefined, { timeout: 30_000 });
  return (await browser.page.evaluate(pageResult))!;
}

describe.skipIf(skipBrowserTests())('the browser examples, from the packed package', () => {
  let scratch: string;
  let app: string;
  let browser: Browser;
  /** The Vite example's build, once the first test has made it. */
  let viteOut: string | undefined;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'webmpc-examples-'));
    app = join(scratch, 'app');
    installInto(app, pack(scratch).tarball);
    browser = await launch();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('examples/vite: builds without warnings, keeps libsodium out of the entry chunk, and runs', async () => {
    for (const f of ['index.html', 'main.js']) copyFileSync(join(ROOT, 'examples/vite', f), join(app, f));
    const outDir = join(scratch, 'vite-out');
    const script = join(scratch, 'vite-build.mjs');
    // In a child process with NODE_ENV=production, as `vite build` runs for an app developer.
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
    const out = execFileSync(process.execPath, [script], { cwd: app, encoding: 'utf8', env: { ...process.env, NODE_ENV: 'production' } });
    expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual([]);

    const assets = readdirSync(join(outDir, 'assets'));
    expect(assets.some((f) => f.endsWith('.wasm'))).toBe(true);
    const html = readFileSync(join(outDir, 'index.html'), 'utf8');
    const entry = /src="\/assets\/([^"]+\.js)"/.exec(html)![1]!;
    const size = (f: string) => statSync(join(outDir, 'assets', f)).size;
    const others = assets.filter((f) => f.endsWith('.js') && f !== entry);
    const sodium = others.filter((f) => readFileSync(join(outDir, 'assets', f), 'utf8').includes('crypto_aead_chacha20poly1305'));
    console.log(
      `vite example: entry chunk ${(size(entry) / 1024).toFixed(1)} KB; lazy chunks ${others
        .map((f) => `${(size(f) / 1024).toFixed(1)} KB`)
        .join(', ')}; wasm ${assets
        .filter((f) => f.endsWith('.wasm'))
        .map((f) => `${(size(f) / 1024).toFixed(0)} KB`)
        .join(', ')}`,
    );
    // libsodium is in a chunk of its own, fetched on first use, not in the entry chunk.
    expect(sodium.length).toBe(1);
    expect(readFileSync(join(outDir, 'assets', entry), 'utf8')).not.toContain('crypto_aead_chacha20poly1305');
    // The SDK's own code (sessions, protocols' glue, the engine-worker host, sub-channels): it
    // grew from 95 to 104 KB with the workers; libsodium (over 400 KB) or an inlined Wasm module
    // would break this at once.
    expect(size(entry)).toBeLessThan(128 * 1024);

    viteOut = outDir;
    const server = await serveStatic({ '/': outDir });
    try {
      browser.problems.length = 0;
      const result = await runPage(browser, `${server.url}/`);
      expect(result).toMatchObject({ ok: true, aliceIsRicher: true });
      expect(result.key).toMatch(/^[0-9a-f]{64}$/);
      expect(server.requests.some((p) => p.endsWith('.wasm'))).toBe(true);
      expect(server.requests).toContain(`/assets/${sodium[0]}`);
      // The sessions computed in their engine worker, whose script Vite found and bundled.
      expect(server.requests.some((p) => /^\/assets\/worker-[\w-]+\.js$/.test(p)), server.requests.join(' ')).toBe(true);
      expect(browser.problems).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('examples/import-map: runs with no bundler, straight from node_modules', async () => {
    copyFileSync(join(ROOT, 'examples/import-map/index.html'), join(app, 'import-map.html'));
    const server = await serveStatic({ '/': app });
    try {
      browser.problems.length = 0;
      const result = await runPage(browser, `${server.url}/import-map.html`);
      expect(result).toMatchObject({ ok: true, aliceIsRicher: true });
      expect(result.key).toMatch(/^[0-9a-f]{64}$/);
      expect(server.requests).toContain('/node_modules/webmpc/dist/wasm-gen/webmpc_bg.wasm');
      // The engine worker loads by relative paths: no mapping needed for it.
      expect(server.requests).toContain('/node_modules/webmpc/dist/engine/worker.js');
      expect(browser.problems).toEqual([]);
    } finally {
      await server.close();
    }
  });

  for (const engine of ['firefox', 'webkit'] as const) {
    it.skipIf(skipEngine(engine))(`both examples in ${ENGINE_NAMES[engine]}: the Vite build and the import map, with their engine workers`, async () => {
      expect(viteOut, 'the Vite example test builds what this one loads').toBeDefined();
      copyFileSync(join(ROOT, 'examples/import-map/index.html'), join(app, 'import-map.html'));
      const vite = await serveStatic({ '/': viteOut! });
      const plain = await serveStatic({ '/': app });
      let other: Awaited<ReturnType<typeof launchEngine>> | undefined;
      try {
        other = await launchEngine(engine);
        for (const [server, path] of [[vite, '/'], [plain, '/import-map.html']] as const) {
          const result = await runPage(other, `${server.url}${path}`);
          expect(result, `${path} in ${ENGINE_NAMES[engine]}`).toMatchObject({ ok: true, aliceIsRicher: true });
          expect(result.key).toMatch(/^[0-9a-f]{64}$/);
          expect(server.requests.some((p) => /worker[\w-]*\.js$/.test(p)), server.requests.join(' ')).toBe(true);
        }
        expect(other.problems).toEqual([]);
      } finally {
        await other?.close();
        await Promise.all([vite.close(), plain.close()]);
      }
    }, 120_000);
  }

  it('a server that answers the .wasm URL with its HTML page: init says so, and where', async () => {
    const page = `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="importmap">{ "imports": { "webmpc": "/node_modules/webmpc/dist/index.js" } }</script>
<script type="module">
import { init } from 'webmpc';
init({ wasm: '/assets/webmpc_bg.wasm' }).then(
  () => { window.result = { ok: true }; },
  (e) => { window.result = { ok: false, error: e.code + ': ' + e.message }; },
);
</script></head><body>app</body></html>`;
    // The catch-all: the app's HTML for a path that has no file.
    const server = await serveStatic({ '/node_modules/': join(app, 'node_modules') }, {
      '/': page,
      '/assets/webmpc_bg.wasm': '<!doctype html><html><body>app</body></html>',
    });
    try {
      const result = await runPage(browser, `${server.url}/`);
      expect(result.ok).toBe(false);
      expect(result.error).toContain(`WASM_LOAD_FAILED: webmpc: could not load the Wasm module: got HTML, not Wasm, from ${server.url}/assets/webmpc_bg.wasm`);
      expect(result.error).toContain('init({ wasm })');
    } finally {
      await server.close();
    }
  });
});
