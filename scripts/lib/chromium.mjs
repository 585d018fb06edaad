// Debian's chromium driven by playwright-core (never a Playwright-downloaded browser), with the
// flags that work as root on this machine kind, in a fresh profile per launch. Shared by the
// browser tests and the wasm-chromium benchmarks.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.WEBMPC_CHROMIUM ?? '/usr/bin/chromium';

/**
 * @typedef {object} Browser
 * @property {'chromium'} engine
 * @property {string} version
 * @property {import('playwright-core').Page} page
 * @property {string[]} problems console errors/warnings and uncaught page errors (of the first
 *   page and of those `newPage` opens), for tests to assert there are none
 * @property {() => Promise<import('playwright-core').Page>} newPage another tab, its problems recorded
 * @property {() => Promise<void>} close
 */

export function chromiumAvailable() {
  return existsSync(CHROMIUM);
}

/**
 * Records a page's console errors/warnings and uncaught errors in `problems`.
 * @param {import('playwright-core').Page} page
 * @param {string[]} problems
 */
export function watch(page, problems) {
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning') {
      problems.push(`${msg.type()}: ${msg.text()} (${msg.location().url})`);
    }
  });
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
}

/** @returns {Promise<Browser>} */
export async function launch() {
  const userDataDir = await mkdtemp(join(tmpdir(), 'webmpc-chromium-'));
  /** @type {import('playwright-core').BrowserContext} */
  let context;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      chromiumSandbox: false,
      args: [
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        // WebRTC: gather real host candidates instead of mDNS names (nothing resolves those in
        // a headless test VM), so data channels between local peers connect.
        '--disable-features=WebRtcHideLocalIpsWithMdns',
      ],
      timeout: 60_000,
    });
  } catch (err) {
    await rm(userDataDir, { recursive: true, force: true });
    throw err;
  }
  const page = context.pages()[0] ?? (await context.newPage());
  /** @type {string[]} */
  const problems = [];
  watch(page, problems);
  return {
    engine: 'chromium',
    version: `Chromium ${context.browser()?.version() ?? (await page.evaluate(() => navigator.userAgent)).replace(/.*Chrome\/([\d.]+).*/, '$1')}`,
    page,
    problems,
    newPage: async () => {
      const p = await context.newPage();
      watch(p, problems);
      return p;
    },
    close: async () => {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}
