// WebKitGTK (Safari's engine) for the browser tests and benchmarks: Debian's `webkit2gtk-driver`
// gives WebKitWebDriver, a W3C WebDriver for WebKitGTK's MiniBrowser, which runs under an Xvfb
// display of its own (MiniBrowser's --headless hung here). Playwright's WebKit build cannot be
// downloaded on these machines, so this drives the Debian one.
//
// The client is a minimal W3C WebDriver client over fetch (about ten endpoints), not the npm
// `webdriver` package: that one's current major needs Node 22 and brings ~100 packages for what
// is here a dozen HTTP requests, and none of them would help with the one hard part, below.
//
// The hard part: a WebDriver session runs one command at a time, and the tests run two pages of
// one browser at once (two parties, each awaiting the other). A long `execute/async` on page A
// would block page B's command until A's timed out. So `evaluate` starts the function in the page
// (a short `execute/sync` that leaves its promise's outcome in a slot on `window`) and then polls
// the slot with short commands; commands of all the browser's pages share the session in turn.
//
// Console errors: classic WebDriver has no console events, so each page is given hooks (on
// console.error/warn, `error` and `unhandledrejection`) right after it loads, and whatever they
// caught is fetched with every poll. Messages logged while the page was still loading (before the
// hooks) are not seen; the tests check their pages' load status explicitly anyway.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const MINIBROWSER = process.env.WEBMPC_MINIBROWSER ?? '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';
export const WEBKIT_DRIVER = process.env.WEBMPC_WEBKIT_DRIVER ?? '/usr/bin/WebKitWebDriver';
export const XVFB = '/usr/bin/Xvfb';

/** Whether everything the launcher needs is installed. */
export function webkitAvailable() {
  return existsSync(MINIBROWSER) && existsSync(WEBKIT_DRIVER) && existsSync(XVFB);
}

/**
 * MiniBrowser's arguments: automation mode; no DOM timer throttling (the tests keep several
 * windows busy at once, and a throttled one would answer its peers late).
 */
const ARGS = ['--automation', '--features=-DOMTimersThrottling,-HiddenPageDOMTimerThrottling'];

/** Hooks installed in every page after it loads: console errors and uncaught errors land in a list. */
const HOOKS = `
if (!window.__wdProblems) {
  const list = (window.__wdProblems = []);
  for (const [level, type] of [['error', 'error'], ['warn', 'warning']]) {
    const original = console[level];
    console[level] = function (...args) {
      try { list.push(type + ': ' + args.map((a) => (a instanceof Error ? a.message : String(a))).join(' ') + ' (' + location.href + ')'); } catch {}
      return original.apply(this, args);
    };
  }
  addEventListener('error', (e) => list.push('pageerror: ' + (e.error && e.error.message ? e.error.message : e.message)));
  addEventListener('unhandledrejection', (e) => list.push('pageerror: ' + (e.reason && e.reason.message ? e.reason.message : String(e.reason))));
}
`;

/** Starts `fn(arg)` in the page; its outcome goes to window.__wd[id]. */
const START = `
const [src, arg, id] = arguments;
const slots = (window.__wd = window.__wd || {});
const slot = (slots[id] = { done: false });
Promise.resolve()
  .then(() => (0, eval)('(' + src + ')')(arg))
  .then(
    (value) => { slot.value = value === undefined ? { __undefined: true } : value; slot.done = true; },
    (e) => { slot.error = String((e && e.stack) || e); slot.message = String((e && e.message) || e); slot.done = true; },
  );
`;

/** Fetches (and clears) the slot of evaluation `id` and the problems the hooks caught. */
const POLL = `
const [id] = arguments;
const problems = window.__wdProblems ? window.__wdProblems.splice(0) : [];
const slots = window.__wd;
const slot = slots && slots[id];
if (!slot) return { gone: true, problems };
if (!slot.done) return { done: false, problems };
delete slots[id];
return { done: true, slot, problems };
`;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A free TCP port on 127.0.0.1 (for the driver to listen on). */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (srv.address());
      srv.close(() => resolve(port));
    });
  });
}

/** Waits for `child` to exit, at most `ms`; true if it did. */
function exited(child, ms) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

/**
 * Process groups this launcher started and has not ended yet. They are detached (so that a group
 * kill reaches MiniBrowser's helpers), so nothing else would end them if the test process exited
 * without calling close() (process.exit, an uncaught error): the exit hook does, as Playwright
 * and Puppeteer do for the browsers they launch. A SIGKILLed test process leaves them behind.
 * @type {Set<number>}
 */
const liveGroups = new Set();
let exitHook = false;
function track(child) {
  if (!child?.pid) return;
  liveGroups.add(child.pid);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const pid of liveGroups) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    });
  }
}

/** Ends a process group this launcher started (the driver's includes MiniBrowser and its helpers). */
async function endGroup(child) {
  if (!child?.pid) return;
  const kill = (sig) => {
    try {
      process.kill(-child.pid, sig);
    } catch {
      // Already gone.
    }
  };
  kill('SIGTERM');
  if (!(await exited(child, 5_000))) {
    kill('SIGKILL');
    await exited(child, 5_000);
  }
  // The group may outlive its leader (MiniBrowser's helper processes): make sure of them too.
  kill('SIGKILL');
  liveGroups.delete(child.pid);
}

class WebDriverError extends Error {
  constructor(command, value) {
    super(`WebKitWebDriver ${command}: ${value?.error ?? 'error'}: ${value?.message ?? JSON.stringify(value)}`);
    this.name = 'WebDriverError';
    this.value = value;
  }
}

/** One W3C WebDriver session; commands are queued, each (window switch + command) as one step. */
class Session {
  /** @param {string} base @param {string} id */
  constructor(base, id) {
    this.base = base;
    this.id = id;
    /** @type {string | undefined} */
    this.current = undefined;
    this.queue = Promise.resolve();
    /** The page close under way, if any (see WebKitPage.close). */
    this.closing = Promise.resolve();
  }

  async #http(method, path, body) {
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json().catch(() => ({ value: { error: `HTTP ${res.status}` } }));
    if (!res.ok) throw new WebDriverError(`${method} ${path.replace(/^\/session\/[^/]+/, '')}`, json.value);
    return json.value;
  }

  /** Runs `method path` in window `handle` (undefined: whichever), after the commands queued before it. */
  command(handle, method, path, body) {
    const run = async () => {
      if (handle !== undefined && handle !== this.current) {
        await this.#http('POST', `/session/${this.id}/window`, { handle });
        this.current = handle;
      }
      return this.#http(method, `/session/${this.id}${path}`, body);
    };
    const result = this.queue.then(run, run);
    this.queue = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

/** A window of the session, with the page API the tests use (the subset of Playwright's Page). */
class WebKitPage {
  /** @param {Session} session @param {string} handle @param {string[]} problems */
  constructor(session, handle, problems) {
    this.session = session;
    this.handle = handle;
    this.problems = problems;
    this.closed = false;
    this.next = 0;
  }

  #command(method, path, body) {
    if (this.closed) return Promise.reject(new Error('WebKit page: closed'));
    return this.session.command(this.handle, method, path, body);
  }

  async goto(url) {
    await this.#command('POST', '/url', { url });
    await this.#command('POST', '/execute/sync', { script: HOOKS, args: [] });
  }

  url() {
    return this.#command('GET', '/url');
  }

  /**
   * Runs `fn(arg)` in the page and resolves with its (JSON-serialisable) result; rejects with
   * the page's error if it throws. Polls, so that other pages' commands can run meanwhile.
   */
  async evaluate(fn, arg) {
    const id = `e${this.next++}`;
    const src = typeof fn === 'function' ? fn.toString() : `() => (${fn})`;
    await this.#command('POST', '/execute/sync', { script: START, args: [src, arg ?? null, id] });
    let wait = 2;
    for (;;) {
      const r = await this.#command('POST', '/execute/sync', { script: POLL, args: [id] });
      this.problems.push(...r.problems);
      if (r.gone) throw new Error('WebKit page: the page navigated or reloaded while a function ran in it');
      if (r.done) {
        if (r.slot.error !== undefined) {
          const err = new Error(`page.evaluate: ${r.slot.message}`);
          err.stack = r.slot.error;
          throw err;
        }
        const v = r.slot.value;
        return v && typeof v === 'object' && v.__undefined === true && Object.keys(v).length === 1 ? undefined : v;
      }
      await sleep(wait);
      wait = Math.min(25, wait * 2);
    }
  }

  /** Resolves once `fn(arg)` is truthy in the page (Playwright's argument order). */
  async waitForFunction(fn, arg, options = {}) {
    const timeout = options.timeout ?? 30_000;
    const deadline = Date.now() + timeout;
    for (;;) {
      const v = await this.evaluate(fn, arg);
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`WebKit page: waitForFunction timed out after ${timeout} ms`);
      await sleep(50);
    }
  }

  /** Adds a script element (inline `content`, or `url`) to the page. */
  async addScriptTag({ type, content, url }) {
    await this.evaluate(
      ({ type, content, url }) => {
        const s = document.createElement('script');
        if (type) s.type = type;
        if (url) s.src = url;
        else s.textContent = content;
        document.head.appendChild(s);
      },
      { type, content, url },
    );
  }

  async screenshot({ path }) {
    const png = await this.#command('GET', '/screenshot');
    await writeFile(path, Buffer.from(png, 'base64'));
  }

  async close() {
    if (this.closed) return;
    // The hooks' last catch.
    try {
      const r = await this.#command('POST', '/execute/sync', { script: 'return window.__wdProblems ? window.__wdProblems.splice(0) : []', args: [] });
      this.problems.push(...r);
    } catch {
      // A page that cannot answer has nothing to add.
    }
    // WebDriver ends the session with its last window: keep a blank one, so that closing every
    // page (a bench's pair of pages, closed at once) leaves the browser able to open more. One
    // close at a time, so that two cannot both see the other's window and delete both.
    const last = this.session.closing;
    this.session.closing = (async () => {
      await last;
      const handles = await this.#command('GET', '/window/handles').catch(() => []);
      if (handles.length <= 1) await this.#command('POST', '/window/new', { type: 'window' }).catch(() => {});
      /** @type {string[]} */
      const remaining = await this.#command('DELETE', '/window').catch(() => []);
      // The driver's current window was this one; commands that name no window (newPage) need a
      // live one to be current.
      this.session.current = undefined;
      if (remaining.length > 0) await this.session.command(remaining[0], 'GET', '/window/handles').catch(() => {});
    })();
    await this.session.closing;
    this.closed = true;
  }
}

/**
 * @typedef {object} WebKitBrowser
 * @property {'webkit'} engine
 * @property {string} version
 * @property {WebKitPage} page
 * @property {string[]} problems console errors/warnings and uncaught page errors of all its pages
 * @property {() => Promise<WebKitPage>} newPage
 * @property {() => Promise<void>} close ends the session, the driver, MiniBrowser and Xvfb
 */

/** @returns {Promise<WebKitBrowser>} */
export async function launch() {
  const home = await mkdtemp(join(tmpdir(), 'webmpc-webkit-'));
  /** @type {import('node:child_process').ChildProcess | undefined} */
  let xvfb;
  /** @type {import('node:child_process').ChildProcess | undefined} */
  let driver;
  let driverLog = '';
  const close = async () => {
    await endGroup(driver);
    await endGroup(xvfb);
    await rm(home, { recursive: true, force: true });
  };
  try {
    // Xvfb picks a free display and writes its number to fd 3.
    xvfb = spawn(XVFB, ['-displayfd', '3', '-screen', '0', '1280x1024x24', '-nolisten', 'tcp', '-nolisten', 'unix'], {
      stdio: ['ignore', 'ignore', 'ignore', 'pipe'],
      detached: true,
    });
    track(xvfb);
    const display = await new Promise((resolve, reject) => {
      let got = '';
      const t = setTimeout(() => reject(new Error('Xvfb did not report a display within 30 s')), 30_000);
      xvfb.stdio[3].on('data', (d) => {
        got += String(d);
        if (got.includes('\n')) {
          clearTimeout(t);
          resolve(got.trim());
        }
      });
      xvfb.once('exit', (code) => {
        clearTimeout(t);
        reject(new Error(`Xvfb exited (${code}) before reporting a display`));
      });
    });
    const port = await freePort();
    driver = spawn(WEBKIT_DRIVER, [`--port=${port}`], {
      // A home of its own: MiniBrowser keeps caches and cookies there.
      env: { ...process.env, DISPLAY: `:${display}`, HOME: home, XDG_CACHE_HOME: join(home, 'cache'), XDG_DATA_HOME: join(home, 'data') },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    track(driver);
    const keep = (d) => {
      driverLog = (driverLog + String(d)).slice(-4000);
    };
    driver.stdout.on('data', keep);
    driver.stderr.on('data', keep);
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        const r = await fetch(`${base}/status`);
        if (r.ok && (await r.json()).value?.ready) break;
      } catch {
        // Not listening yet.
      }
      if (driver.exitCode !== null) throw new Error(`WebKitWebDriver exited (${driver.exitCode}): ${driverLog}`);
      if (Date.now() > deadline) throw new Error(`WebKitWebDriver not ready within 30 s: ${driverLog}`);
      await sleep(50);
    }
    const res = await fetch(`${base}/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        capabilities: { alwaysMatch: { 'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ARGS }, timeouts: { script: 60_000, pageLoad: 60_000 } } },
      }),
      signal: AbortSignal.timeout(60_000),
    });
    const created = await res.json();
    if (!res.ok) throw new WebDriverError('new session', created.value);
    const session = new Session(base, created.value.sessionId);
    const version = created.value.capabilities.browserVersion;
    /** @type {string[]} */
    const problems = [];
    const first = await session.command(undefined, 'GET', '/window');
    const page = new WebKitPage(session, first, problems);
    return {
      engine: 'webkit',
      version: `WebKitGTK ${version}`,
      page,
      problems,
      newPage: async () => {
        const w = await session.command(undefined, 'POST', '/window/new', { type: 'window' });
        return new WebKitPage(session, w.handle, problems);
      },
      close: async () => {
        await session.command(undefined, 'DELETE', '').catch(() => {});
        await close();
      },
    };
  } catch (err) {
    await close();
    throw err;
  }
}
