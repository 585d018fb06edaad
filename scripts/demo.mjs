#!/usr/bin/env node
// The sealed-bid auction demo (`npm run demo`): sets up and builds what is missing, starts a
// signaling server and a static server for the web app, runs an auction among scripted bidders,
// prints the result and the link where people can hold their own auction in their browsers.
//
//   npm run demo                       3 Node bidders over WebRTC (node-datachannel), random bids
//   npm run demo -- --browser          the bidders are headless Chromium pages driven through the
//                                      app's UI; a screenshot of each page's result is saved
//   npm run demo -- 10 250 250         fixed bids (one per bidder; their count sets the bidders)
//   npm run demo -- --servers 3 --bidders 1000
//                                      the auction at scale: 3 compute parties (`webmpc serve`
//                                      processes, authgc among them; --engine mascot for
//                                      MASCOT) and 1,000 scripted client
//                                      bidders that only give their bids (`submit`);
//                                      --page-bidders K serves the web app and waits for K
//                                      browser bidders too (the link is printed)
//
// Options: --bidders N (default 3), --engine NAME (authgc, the default, or mascot),
// --serve / --no-serve (keep serving the app for people after the scripted auction; default: only
// when run from a terminal), --host ADDR (interface to serve on, default 127.0.0.1; 0.0.0.0 lets
// other machines join), --screenshots DIR, --skip-build (no setup, no SDK build: the tests' mode),
// --timeout S (for the scripted auction, default 120), --phase-timeout S (default 30, or 6 s per
// bidder beyond 5: see "Deadlines" below), --build-only (set up and build, then stop).
// Exit code: 0 the auction finished with the right result, 1 it failed, 2 bad arguments.
//
// Deadlines. Nothing here waits without one, and each says what it waited for:
//   - each Node bidder must start (load the Wasm, make its key) within the phase timeout;
//   - joining the room and connecting to every other bidder over WebRTC: the phase timeout (the
//     bidders' own deadline, which names the bidders that never joined or never connected);
//   - every later phase (key exchange, session, setup, preprocessing, garbling, evaluating): no
//     more than the phase timeout without progress;
//   - a bidder that has given its result must exit within 10 s;
//   - the whole auction: --timeout.
// A missed deadline stops every bidder and names the phase and the bidder that was waited for.
// Testing only: --stall SEAT:POINT stops bidder SEAT at POINT (starting, connecting, securing or
// exiting; see STALL_POINTS in demo-app/src/auction.ts), alive, so the deadlines can be tested.
import { spawnSync, fork } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const APP = join(ROOT, 'demo-app');
const WEB = join(APP, 'dist', 'web');
const NODE_OUT = join(APP, 'dist', 'node');
const BIDDER = join(NODE_OUT, 'bidder.mjs');
const MAX_BID = 2 ** 32 - 1;

const USAGE = `usage: npm run demo -- [--browser] [--bidders N] [--servers S] [--engine authgc|mascot] [BID ...]
  [--serve | --no-serve] [--host ADDR] [--screenshots DIR] [--timeout S] [--phase-timeout S]
  [--skip-build] [--build-only]`;
/** How long a bidder that has given its result may take to exit. */
const EXIT_DEADLINE_S = 10;

/** Progress of the launcher itself goes to stderr; the auction's story to stdout. */
const note = (line) => process.stderr.write(`demo: ${line}\n`);
const out = (line) => process.stdout.write(`${line}\n`);

class Usage extends Error {}

function parseCommandLine(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        browser: { type: 'boolean', default: false },
        bidders: { type: 'string' },
        servers: { type: 'string' },
        'page-bidders': { type: 'string' },
        engine: { type: 'string' },
        serve: { type: 'boolean' },
        'no-serve': { type: 'boolean' },
        host: { type: 'string', default: '127.0.0.1' },
        screenshots: { type: 'string' },
        timeout: { type: 'string' },
        'phase-timeout': { type: 'string' },
        stall: { type: 'string' },
        'skip-build': { type: 'boolean', default: false },
        'build-only': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    throw new Usage(err.message);
  }
  const { values, positionals } = parsed;
  if (values.help) throw new Usage('');
  const bids = positionals.map((p) => {
    if (!/^\d{1,10}$/.test(p) || Number(p) > MAX_BID) throw new Usage(`bids are whole numbers from 0 to ${MAX_BID}; got "${p}"`);
    return Number(p);
  });
  let bidders = values.bidders === undefined ? (bids.length || 3) : Number(values.bidders);
  const servers = values.servers === undefined ? undefined : Number(values.servers);
  if (servers !== undefined && (!Number.isInteger(servers) || servers < 2 || servers > 5)) throw new Usage('--servers must be 2 to 5');
  if (servers !== undefined && values.browser) throw new Usage('--servers runs scripted Node clients (no --browser yet)');
  const maxBidders = servers === undefined ? 16 : 100_000;
  const pageBidders = values['page-bidders'] === undefined ? 0 : Number(values['page-bidders']);
  if (!Number.isInteger(pageBidders) || pageBidders < 0 || (pageBidders > 0 && servers === undefined)) throw new Usage('--page-bidders N goes with --servers (N whole)');
  if (!Number.isInteger(bidders) || bidders < 2 || bidders > maxBidders) throw new Usage(`--bidders must be 2 to ${maxBidders}`);
  if (bids.length > 0 && bids.length !== bidders) throw new Usage(`${bids.length} bids given for ${bidders} bidders`);
  while (bids.length < bidders) bids.push(randomInt(0, 2 ** 32));
  // At scale the servers preprocess for every bid: give them about a second per bidder.
  const timeoutS = values.timeout === undefined ? (servers === undefined ? 120 : Math.max(300, bidders)) : Number(values.timeout);
  if (!(timeoutS > 0)) throw new Usage('--timeout must be a positive number of seconds');
  // Setup grows with the number of pairs, and all bidders share this machine's cores.
  const phaseTimeoutS = values['phase-timeout'] === undefined ? Math.max(30, 6 * bidders) : Number(values['phase-timeout']);
  if (!(phaseTimeoutS > 0)) throw new Usage('--phase-timeout must be a positive number of seconds');
  let stall;
  if (values.stall !== undefined) {
    const m = /^(\d+):([a-z]+)$/.exec(values.stall);
    if (!m || Number(m[1]) >= bidders || values.browser) throw new Usage('--stall takes SEAT:POINT for a Node bidder (testing only)');
    stall = { seat: Number(m[1]), point: m[2] };
  }
  const serve = values['no-serve'] ? false : (values.serve ?? Boolean(process.stdout.isTTY && process.stdin.isTTY));
  return { browser: values.browser, bids, servers, pageBidders, engine: values.engine, serve, host: values.host, screenshots: values.screenshots, timeoutS, phaseTimeoutS, stall, skipBuild: values['skip-build'], buildOnly: values['build-only'] };
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: ROOT, stdio: ['ignore', 2, 2] });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status ?? r.signal}`})`);
}

/** Newest modification time under `path` (files only). */
function newest(path) {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let t = 0;
  for (const entry of readdirSync(path)) t = Math.max(t, newest(join(path, entry)));
  return t;
}

/**
 * Builds the web app and the Node bidder with Vite, unless they are newer than their sources.
 * Each is built beside its place and then moved in, so a concurrent run (another test file)
 * never serves or runs a half-written build.
 */
async function buildApp() {
  const stampFile = join(APP, 'dist', '.stamp');
  const sources = Math.max(newest(join(APP, 'src')), newest(join(APP, 'index.html')), newest(join(APP, 'vite.config.ts')), newest(join(ROOT, 'dist')));
  const stamp = JSON.stringify({ sources });
  if (existsSync(join(WEB, 'index.html')) && existsSync(BIDDER) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) {
    note('web app and Node bidder: up to date');
    return;
  }
  const t0 = performance.now();
  const { build } = await import('vite');
  const configFile = join(APP, 'vite.config.ts');
  const fresh = (dir) => `${dir}.new-${process.pid}`;
  await build({ configFile, logLevel: 'warn', build: { outDir: fresh(WEB) } });
  await build({ configFile, logLevel: 'warn', build: { ssr: true, outDir: fresh(NODE_OUT) } });
  for (const dir of [WEB, NODE_OUT]) {
    const old = `${dir}.old-${process.pid}`;
    if (existsSync(dir)) renameSync(dir, old);
    renameSync(fresh(dir), dir);
    rmSync(old, { recursive: true, force: true });
  }
  writeFileSync(stampFile, stamp);
  note(`web app and Node bidder built with Vite (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
}

/** An address of this machine others can reach, for the printed link when serving on 0.0.0.0. */
function lanAddress() {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}

/**
 * Starts one managed Node bidder; resolves with its result message, rejects with its failure.
 * `track` hears what the bidder says of its progress (its key, each phase and progress step, its
 * result), for the deadlines.
 */
function startNodeBidder(seat, bid, link, waitS, stallAt, track) {
  const child = fork(BIDDER, ['--ipc'], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  const prefix = (stream, sink) => {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop();
      for (const line of lines) sink.write(`[bidder ${seat}] ${line}\n`);
    });
    stream.on('end', () => rest && sink.write(`[bidder ${seat}] ${rest}\n`));
  };
  prefix(child.stdout, process.stdout);
  prefix(child.stderr, process.stderr);
  let outcome;
  const done = new Promise((resolve, reject) => {
    child.on('message', (m) => {
      track(m);
      if (m?.type === 'result' || m?.type === 'failed') outcome = m;
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0 && outcome?.type === 'result') resolve(outcome);
      else reject(Object.assign(new Error(outcome?.error?.title ?? `bidder ${seat} exited (${signal ?? `code ${code}`})`), { explained: outcome?.error }));
    });
  });
  child.send({ type: 'start', link: { ...link, seat }, bid, waitS, ...(stallAt ? { stallAt } : {}) });
  return { child, done };
}

/**
 * Where each scripted bidder is, as far as the launcher knows, and the deadline of that place:
 * the watchdog of {@link nodeAuction}. A bidder is `starting` until it hands over its key, then
 * `keys` (waiting for everyone's) until it reports a phase of its own; after its result it is
 * `exiting`.
 */
class Watchdog {
  constructor(count, phaseTimeoutS, label) {
    const now = performance.now();
    this.bidders = Array.from({ length: count }, () => ({ place: 'starting', since: now, exited: false }));
    this.phaseTimeoutS = phaseTimeoutS;
    this.label = label;
  }

  /** Records a message from bidder `seat`. */
  heard(seat, m) {
    const b = this.bidders[seat];
    const place = m?.type === 'key' ? 'keys' : m?.type === 'phase' ? m.phase : m?.type === 'result' ? 'exiting' : undefined;
    if (place === undefined) return;
    b.place = place;
    b.since = performance.now(); // a phase change or a progress step: the deadline starts again
  }

  exited(seat) {
    this.bidders[seat].exited = true;
  }

  #name(place) {
    return { starting: 'starting (loading the Wasm, making its key)', keys: "waiting for the other bidders' keys", exiting: 'exiting after its result' }[place] ?? this.label(place);
  }

  /** Seconds bidder `b` may stay where it is without progress. */
  #limit(b) {
    if (b.place === 'exiting') return EXIT_DEADLINE_S;
    // In these the bidders have deadlines of their own (the phase timeout), which name the bidder
    // that never joined, connected or answered the key exchange; the launcher's is a backstop.
    if (b.place === 'connecting' || b.place === 'securing') return this.phaseTimeoutS + 5;
    return this.phaseTimeoutS;
  }

  /** The keys went out: every bidder that has its key moves on to joining the room. */
  keysRelayed() {
    const now = performance.now();
    for (const b of this.bidders) if (b.place === 'keys') Object.assign(b, { place: 'connecting', since: now });
  }

  /** Where every bidder is, for a failure message. */
  where() {
    return this.bidders.map((b, seat) => `bidder ${seat}: ${b.exited ? 'exited' : this.#name(b.place)}`).join('; ');
  }

  /**
   * The missed deadline, if any, as a message naming the bidder waited for and its phase. A
   * bidder that never started or never finished exiting is named before the ones waiting for it.
   */
  missed(now = performance.now()) {
    const late = this.bidders
      .map((b, seat) => ({ b, seat }))
      .filter(({ b }) => !b.exited && now - b.since > this.#limit(b) * 1000);
    if (late.length === 0) return undefined;
    const first = late.find(({ b }) => b.place === 'starting' || b.place === 'exiting') ?? late[0];
    const { b, seat } = first;
    const what =
      b.place === 'starting'
        ? `bidder ${seat} did not start within ${this.#limit(b)} s`
        : b.place === 'exiting'
          ? `bidder ${seat} gave its result but did not exit within ${this.#limit(b)} s (something it opened is still open)`
          : `bidder ${seat} made no progress for ${this.#limit(b)} s in phase "${this.#name(b.place)}"`;
    return `${what} (${this.where()})`;
  }
}

/**
 * The scripted auction among Node processes. Resolves with each bidder's { seat, result, phases };
 * rejects on the first failure or missed deadline, having stopped every bidder.
 */
async function nodeAuction(link, bids, { timeoutS, phaseTimeoutS, stall, label }) {
  const keys = new Map();
  const watchdog = new Watchdog(bids.length, phaseTimeoutS, label);
  let missed;
  const bidders = bids.map((bid, seat) =>
    startNodeBidder(seat, bid, link, phaseTimeoutS, stall?.seat === seat ? stall.point : undefined, (m) => {
      if (m?.type === 'key') keys.set(seat, m.key);
      watchdog.heard(seat, m);
    }),
  );
  bidders.forEach(({ child }, seat) => child.on('exit', () => watchdog.exited(seat)));
  const stopAll = () => {
    for (const { child } of bidders) if (child.exitCode === null && child.signalCode === null) child.kill();
  };
  // Every bidder pins every other's key: relay them once all are known.
  const relay = setInterval(() => {
    if (keys.size < bids.length) return;
    clearInterval(relay);
    const all = bids.map((_, i) => keys.get(i));
    for (const { child } of bidders) if (child.connected) child.send({ type: 'keys', keys: all });
    watchdog.keysRelayed();
  }, 5);
  const t0 = performance.now();
  const watch = setInterval(() => {
    if (missed) return;
    missed = performance.now() - t0 > timeoutS * 1000 ? `the auction did not finish within ${timeoutS} s (${watchdog.where()})` : watchdog.missed();
    if (missed) {
      note(`deadline missed: ${missed}; stopping the bidders`);
      stopAll();
    }
  }, 250);
  // Once one bidder has failed, the others get a few seconds to notice and say what they saw
  // (a connected bidder fails at once; one still joining would wait for its deadline).
  let grace;
  for (const b of bidders) {
    b.done.catch(() => {
      grace ??= setTimeout(stopAll, 5_000);
    });
  }
  try {
    const settled = await Promise.allSettled(bidders.map((b) => b.done));
    if (missed) throw new Error(`deadline missed: ${missed}`);
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    return settled.map((s) => s.value);
  } finally {
    clearInterval(relay);
    clearInterval(watch);
    clearTimeout(grace);
    stopAll();
  }
}

/** The scripted auction among Chromium pages, through the app's UI. Saves a screenshot per page. */
async function browserAuction(appUrl, link, bids, timeoutS, shotsDir) {
  const { launch } = await import(pathToFileURL(join(ROOT, 'scripts/lib/chromium.mjs')).href);
  const browser = await launch();
  let poll;
  try {
    const pages = [browser.page];
    for (let i = 1; i < bids.length; i++) pages.push(await browser.page.context().newPage());
    const { linkUrl } = await importCore('room');
    mkdirSync(shotsDir, { recursive: true });
    const codes = [];
    let gotAll;
    const allCodes = new Promise((resolve) => (gotAll = resolve));
    poll = setInterval(() => codes.filter(Boolean).length === bids.length && gotAll(), 20);
    // The first page to fail ends every page's wait for the others.
    let failed;
    const failure = new Promise((_, reject) => (failed = reject));
    failure.catch(() => {});
    const results = await Promise.all(
      pages.map(async (page, seat) => {
        await page.setViewportSize({ width: 900, height: 1000 });
        page.on('pageerror', (e) => note(`bidder ${seat}'s page: ${e.message}`));
        await page.goto(`${linkUrl(`${appUrl}/`, { ...link, seat })}&wait=${timeoutS}`);
        await page.locator('#bid:not([disabled])').waitFor({ timeout: 30_000 });
        await page.fill('#bid', String(bids[seat]));
        await page.click('#bid-button');
        out(`[bidder ${seat}] (Chromium page) placed bid ${bids[seat]}`);
        // The people's key check: each pair of pages must show the same code. This script sees
        // every page, so it compares them and answers for the people.
        // The question, or the page's failure if it comes first (a bidder that never arrives).
        await page.waitForFunction(() => document.querySelector('#codes-match') || window.auctionState?.status === 'failed', undefined, {
          timeout: timeoutS * 1000,
        });
        await failedPage(page);
        codes[seat] = await page.evaluate(() =>
          Object.fromEntries([...document.querySelectorAll('[data-testid^="sas-"]')].map((e) => [e.getAttribute('data-testid').slice(4), e.textContent])),
        );
        // Every page's codes, unless another page failed first (its failure ends the auction).
        await Promise.race([allCodes, failure]);
        const mine = Object.entries(codes[seat]);
        const match = mine.length === bids.length - 1 && mine.every(([other, code]) => codes[Number(other)]?.[seat] === code);
        out(`[bidder ${seat}] codes ${mine.map(([o, c]) => `with ${o}: ${c}`).join(', ')}: ${match ? 'all match the other pages' : 'MISMATCH'}`);
        await page.click(match ? '#codes-match' : '#codes-differ');
        await page.waitForFunction(() => ['done', 'failed'].includes(window.auctionState?.status), undefined, { timeout: timeoutS * 1000 });
        const state = await page.evaluate(() => window.auctionState);
        const file = join(shotsDir, `bidder-${seat}.png`);
        await page.screenshot({ path: file, fullPage: true });
        out(`[bidder ${seat}] ${state.status === 'done' ? 'result shown' : 'failure shown'}; screenshot ${relative(process.cwd(), file)}`);
        if (state.status !== 'done') throw Object.assign(new Error(state.error?.title ?? 'the page failed'), { explained: state.error });
        return { seat, result: state.result, phases: state.result.phases };
      }).map((run) => run.catch((err) => (failed(err), Promise.reject(err)))),
    );
    return results;
  } finally {
    clearInterval(poll);
    await browser.close();
  }
}

/** Throws the page's failure, as it shows it, if it has failed. */
async function failedPage(page) {
  const state = await page.evaluate(() => window.auctionState);
  if (state?.status === 'failed') throw Object.assign(new Error(state.error?.title ?? 'the page failed'), { explained: state.error });
}

/** A module of the app's core as built for Node: `auction` or `room` (demo-app/src/*.ts). */
async function importCore(name) {
  return import(pathToFileURL(join(NODE_OUT, `${name}.mjs`)).href);
}

function report(results, bids, t0, reference, phaseLabel) {
  const first = results[0].result;
  for (const r of results) {
    if (r.result.winner !== first.winner || r.result.price !== first.price) throw new Error('the bidders disagree on the result (a bug)');
  }
  const want = reference(bids);
  if (first.winner !== want.winner || first.price !== want.price) {
    throw new Error(`wrong result: got bidder ${first.winner} at ${first.price}, the bids give bidder ${want.winner} at ${want.price} (a bug)`);
  }
  out(`result: bidder ${first.winner} wins and pays ${first.price} (the second-highest bid; ties go to the lowest index)`);
  // Per phase, the slowest bidder's time and the bytes all bidders sent.
  const names = [];
  for (const r of results) for (const p of r.phases) if (!names.includes(p.phase)) names.push(p.phase);
  const parts = names.map((name) => {
    const ps = results.map((r) => r.phases.find((p) => p.phase === name)).filter(Boolean);
    const ms = Math.max(...ps.map((p) => p.ms));
    const known = ps.filter((p) => p.bytesSent !== undefined);
    const bytes = known.length ? ` / ${known.reduce((s, p) => s + p.bytesSent, 0)} B` : '';
    return `${phaseLabel(name)} ${ms.toFixed(0)} ms${bytes}`;
  });
  // The people's part (comparing codes) is not the machines' time.
  const auctionMs = Math.max(...results.map((r) => r.phases.reduce((s, p) => s + (p.phase === 'confirming' ? 0 : p.ms), 0)));
  out(`phases (slowest bidder; bytes sent by all): ${parts.join('; ')}`);
  out(`time: auction ${auctionMs.toFixed(0)} ms (joining the room to the result, slowest bidder${names.includes('confirming') ? ', without comparing the codes' : ''}), ${(performance.now() - t0).toFixed(0)} ms with start-up; engine ${first.engine}, ${first.size}`);
}

/** `--servers S`: S compute parties and scripted client bidders; checks the result against the bids. */
async function serversDemo(options) {
  const { serversAuction } = await import(pathToFileURL(join(ROOT, 'scripts/lib/servers-demo.mjs')).href);
  const bids = options.bids.map(BigInt);
  // The servers' protocol: authgc (the default: seconds for a thousand bids) or mascot.
  const protocol = options.engine ?? 'authgc';
  if (protocol !== 'authgc' && protocol !== 'mascot') {
    process.stderr.write(`demo: --servers runs engine authgc or mascot, not "${protocol}"\n${USAGE}\n`);
    return 2;
  }
  out(`Sealed-bid second-price auction at scale: ${options.servers} compute parties (webmpc serve, ${protocol}), ${bids.length} client bidders (Node, submit), 32-bit bids`);
  // With --page-bidders, the app is served and the window waits for that many pages to join.
  let web;
  if (options.pageBidders > 0) {
    const { serveStatic } = await import(pathToFileURL(join(ROOT, 'scripts/lib/static-server.mjs')).href);
    web = await serveStatic({ '/': WEB }, {}, { host: options.host });
  }
  let r;
  try {
    r = await serversAuction({
      root: ROOT,
      servers: options.servers,
      bids,
      protocol,
      host: options.host,
      timeoutS: options.timeoutS,
      extraClients: options.pageBidders,
      onListening: ({ urls, keys, session }) => {
        if (!web) return;
        const link = `${web.url}/?${new URLSearchParams({ servers: urls.join(','), keys: keys.join(','), session })}`;
        out(`Bid from a browser: open ${link} in ${options.pageBidders} page${options.pageBidders === 1 ? '' : 's'}; the auction waits for them (up to ${options.timeoutS} s).`);
      },
      say: (line) => note(line),
    });
  } finally {
    await web?.close();
  }
  const failed = r.errors.filter(Boolean);
  if (failed.length > 0) {
    process.stderr.write(`demo: ${failed.length} bidders failed, e.g. ${failed[0].code ?? ''} ${failed[0].message}\n`);
    return 1;
  }
  // Slots are the servers' order; each client knows its own.
  const bySlot = [];
  r.clients.forEach((c, i) => (bySlot[c.index] = bids[i]));
  const [winner, price] = r.clients[0].outputs;
  const sorted = [...bids].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
  // (Pages' bids are their own: with pages, only the scripted bidders' agreement is checked.)
  const scripted = options.pageBidders === 0;
  const ok = r.clients.every((c) => c.outputs[0] === winner && c.outputs[1] === price) && (!scripted || (bySlot[Number(winner)] === sorted[0] && price === (sorted[1] ?? 0n)));
  const who = r.clients.findIndex((c) => BigInt(c.index) === winner);
  const winnerText = who >= 0 ? `scripted bidder ${who} (bid ${bids[who]})` : `a page (slot ${winner})`;
  out(`winner: ${winnerText}, pays ${price}; ${scripted ? (ok ? 'matches the bids in the clear' : 'DOES NOT match the bids in the clear') : 'every bidder got the same result'}`);
  out(`time: ${(r.ms.run / 1000).toFixed(1)} s from the servers listening to every bidder's result (${(r.ms.total / 1000).toFixed(1)} s with start-up)`);
  return ok ? 0 : 1;
}

async function main() {
  let options;
  try {
    options = parseCommandLine(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof Usage)) throw err;
    if (err.message) process.stderr.write(`demo: ${err.message}\n`);
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  if (!options.skipBuild) {
    run('bash', ['scripts/setup.sh', ...(options.browser ? ['--browser'] : [])]);
    run(process.execPath, ['scripts/build.mjs', ...(options.servers === undefined ? ['--wasm-only'] : [])]);
  }
  if (options.servers !== undefined && options.pageBidders === 0) return options.buildOnly ? 0 : serversDemo(options);
  await buildApp();
  if (options.servers !== undefined) return options.buildOnly ? 0 : serversDemo(options);
  if (options.buildOnly) return 0;
  const core = await importCore('auction');
  const room = await importCore('room');
  const engine = options.engine === undefined ? core.ENGINES[core.DEFAULT_ENGINE] : core.engineNamed(options.engine);
  if (options.stall && !core.STALL_POINTS.includes(options.stall.point)) {
    process.stderr.write(`demo: --stall: the points are ${core.STALL_POINTS.join(', ')}\n${USAGE}\n`);
    return 2;
  }
  if (!engine || !core.isOffered(engine)) {
    process.stderr.write(`demo: unknown or unavailable engine "${options.engine}"\n${USAGE}\n`);
    return 2;
  }
  const { startSignalingServer } = await import(pathToFileURL(join(ROOT, 'dist/net/node.js')).href);
  const { serveStatic } = await import(pathToFileURL(join(ROOT, 'scripts/lib/static-server.mjs')).href);
  const signaling = await startSignalingServer({ port: 0, host: options.host });
  const publicHost = options.host === '0.0.0.0' ? lanAddress() : options.host;
  const signalingUrl = `ws://${publicHost}:${signaling.port}`;
  // The page reads its default signaling server from config.json beside it.
  writeFileSync(join(WEB, 'config.json'), JSON.stringify({ signalingUrl }));
  const web = await serveStatic({ '/': WEB }, {}, { host: options.host });
  const appUrl = web.url.replace(/\/\/[^:/]+/, `//${publicHost}`);
  let code = 0;
  try {
    const bids = options.bids;
    const link = { room: room.newRoomName(), bidders: bids.length, engine: engine.name, signalingUrl };
    out(`Sealed-bid second-price auction: ${bids.length} bidders (${options.browser ? 'headless Chromium pages' : 'Node processes'}), engine ${engine.name}, 32-bit bids`);
    out(`signaling ${signalingUrl}, app ${appUrl}/, room ${link.room}`);
    if (engine.name === 'plain') out('NOTE: engine plain has no privacy (every bid is sent in the clear); the SDK does not have authgc yet');
    const t0 = performance.now();
    try {
      const results = options.browser
        ? await browserAuction(appUrl, link, bids, options.timeoutS, options.screenshots ?? join(APP, 'dist', 'screenshots'))
        : await nodeAuction(link, bids, { timeoutS: options.timeoutS, phaseTimeoutS: options.phaseTimeoutS, stall: options.stall, label: core.phaseLabel });
      report(results, bids, t0, core.vickreyReference, core.phaseLabel);
    } catch (err) {
      const e = err.explained;
      process.stderr.write(`demo: the auction failed: ${e ? `${e.title} (${e.detail})` : err.message}\n`);
      code = 1;
    }
    const invite = room.linkUrl(`${appUrl}/`, { ...link, room: room.newRoomName(), signalingUrl: undefined });
    out('');
    out(`Hold your own auction: open ${invite} in ${bids.length} browsers (or tabs), one bid each;`);
    out(`or create one with another bidder count at ${appUrl}/`);
    if (options.serve) {
      out('Serving until Ctrl-C.');
      await new Promise((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
    } else {
      out('(not serving: run `npm run demo -- --serve` to keep the app up for people to join)');
    }
  } finally {
    await web.close();
    await signaling.close();
  }
  return code;
}

try {
  process.exitCode = await main();
} catch (error) {
  process.stderr.write(`demo: ${error?.stack ?? error}\n`);
  process.exitCode = 1;
}
