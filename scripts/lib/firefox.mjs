// Debian's firefox-esr driven by puppeteer-core over WebDriver BiDi (Playwright drives only its own
// patched Firefox, which cannot be downloaded here), in a fresh profile per launch. Shared by the
// browser tests and the wasm-firefox benchmarks. The page object is wrapped so that it offers the
// same calls as Playwright's Page where the tests use them (`waitForFunction(fn, arg, options)`).
import { existsSync } from 'node:fs';
import puppeteer from 'puppeteer-core';

export const FIREFOX = process.env.WEBMPC_FIREFOX ?? '/usr/bin/firefox-esr';

export function firefoxAvailable() {
  return existsSync(FIREFOX);
}

/**
 * Preferences: no timer throttling in background tabs (the tests keep two tabs of one browser
 * computing at once; a throttled tab's keepalives would come late), and WebRTC host candidates
 * as addresses rather than mDNS names (nothing resolves those in a test VM).
 */
const PREFS = {
  'dom.min_background_timeout_value': 0,
  'dom.min_background_timeout_value_without_budget_throttling': 0,
  'dom.timeout.enable_budget_timer_throttling': false,
  'dom.timeout.throttling_delay': 0,
  'media.peerconnection.ice.obfuscate_host_addresses': false,
  'browser.tabs.remote.unloadDelayMs': 0,
  'datareporting.policy.dataSubmissionEnabled': false,
  'app.update.auto': false,
  'browser.shell.checkDefaultBrowser': false,
};

/** Puppeteer's page with Playwright's argument order for waitForFunction, and the problems list fed. */
function wrap(page, problems) {
  page.on('console', (msg) => {
    const type = msg.type();
    if (type === 'error' || type === 'warn') {
      problems.push(`${type === 'warn' ? 'warning' : type}: ${msg.text()} (${msg.location()?.url ?? ''})`);
    }
  });
  page.on('pageerror', (err) => problems.push(`pageerror: ${err?.message ?? err}`));
  return {
    raw: page,
    goto: (url) => page.goto(url, { timeout: 60_000 }),
    url: () => page.url(),
    evaluate: (fn, arg) => page.evaluate(fn, arg),
    waitForFunction: (fn, arg, options = {}) => page.waitForFunction(fn, { timeout: options.timeout ?? 30_000, polling: 50 }, arg),
    addScriptTag: (options) => page.addScriptTag(options),
    screenshot: (options) => page.screenshot(options),
    close: (options) => page.close(options),
  };
}

/**
 * @typedef {ReturnType<typeof wrap>} FirefoxPage
 * @typedef {object} FirefoxBrowser
 * @property {'firefox'} engine
 * @property {string} version
 * @property {FirefoxPage} page
 * @property {string[]} problems console errors/warnings and uncaught page errors of all its pages
 * @property {() => Promise<FirefoxPage>} newPage
 * @property {() => Promise<void>} close
 */

/** @returns {Promise<FirefoxBrowser>} */
export async function launch() {
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX,
    headless: true,
    extraPrefsFirefox: PREFS,
    timeout: 60_000,
    protocolTimeout: 300_000,
  });
  try {
    /** @type {string[]} */
    const problems = [];
    const first = (await browser.pages())[0] ?? (await browser.newPage());
    const version = await browser.version();
    return {
      engine: 'firefox',
      version: version.replace(/^firefox\//i, 'Firefox '),
      page: wrap(first, problems),
      problems,
      newPage: async () => wrap(await browser.newPage(), problems),
      close: async () => {
        await browser.close();
      },
    };
  } catch (err) {
    await browser.close();
    throw err;
  }
}
