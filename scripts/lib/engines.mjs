// The browser engines the tests and benchmarks run: Debian's chromium (playwright-core), Debian's
// firefox-esr (puppeteer-core over WebDriver BiDi) and WebKitGTK (WebKitWebDriver + MiniBrowser
// under Xvfb). Each launcher gives the same shape: `page` (goto, evaluate, waitForFunction,
// addScriptTag, screenshot, close), `newPage()`, `problems` (console errors/warnings and uncaught
// errors of all its pages) and `close()`, which leaves no process behind.
import { CHROMIUM, chromiumAvailable, launch as launchChromium } from './chromium.mjs';
import { FIREFOX, firefoxAvailable, launch as launchFirefox } from './firefox.mjs';
import { MINIBROWSER, launch as launchWebKit, webkitAvailable } from './webkit.mjs';

/** @typedef {'chromium' | 'firefox' | 'webkit'} Engine */

/** @type {readonly Engine[]} */
export const ENGINES = ['chromium', 'firefox', 'webkit'];

/** @type {Record<Engine, string>} */
export const ENGINE_NAMES = { chromium: 'Chromium', firefox: 'Firefox', webkit: 'WebKitGTK' };

/** What each engine is, for messages: the executable the launcher drives. */
/** @type {Record<Engine, string>} */
export const ENGINE_EXECUTABLES = { chromium: CHROMIUM, firefox: FIREFOX, webkit: MINIBROWSER };

/** The Debian packages that provide each engine (`scripts/setup.sh --browser` installs them). */
/** @type {Record<Engine, string>} */
export const ENGINE_PACKAGES = { chromium: 'chromium', firefox: 'firefox-esr', webkit: 'webkit2gtk-driver xvfb' };

/** @param {Engine} engine */
export function engineAvailable(engine) {
  return { chromium: chromiumAvailable, firefox: firefoxAvailable, webkit: webkitAvailable }[engine]();
}

/**
 * Engines selected by WEBMPC_BROWSERS (comma-separated, e.g. `firefox,webkit`); all by default.
 * @returns {Engine[]}
 */
export function selectedEngines() {
  const env = process.env.WEBMPC_BROWSERS;
  if (!env) return [...ENGINES];
  const want = env.split(',').map((s) => s.trim()).filter(Boolean);
  for (const e of want) if (!ENGINES.includes(/** @type {Engine} */ (e))) throw new Error(`WEBMPC_BROWSERS: unknown engine '${e}' (known: ${ENGINES.join(', ')})`);
  return /** @type {Engine[]} */ (want);
}

/**
 * @param {Engine} engine
 * @returns {Promise<import('./chromium.mjs').Browser | import('./firefox.mjs').FirefoxBrowser | import('./webkit.mjs').WebKitBrowser>}
 */
export function launchEngine(engine) {
  switch (engine) {
    case 'chromium':
      return launchChromium();
    case 'firefox':
      return launchFirefox();
    case 'webkit':
      return launchWebKit();
    default:
      throw new Error(`unknown engine '${engine}'`);
  }
}
