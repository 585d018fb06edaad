#!/usr/bin/env node
// The WebRTC tuning sweep behind the transport defaults (not part of `npm run bench`: it takes
// ~10 minutes). Each knob is varied alone, the others at their defaults:
//
//   raw data channels (transport-raw.mjs), Chromium↔Chromium and Chromium→Node:
//     message size, bufferedAmount high-water mark (low threshold = high / 4), number of channels
//     the messages are striped over, two peer connections instead of one, ordered vs unordered;
//   our transport (connectMesh), Chromium↔Chromium, Chromium↔Node and Node↔Node:
//     chunkBytes, highWaterBytes, receiveWindowBytes.
//
// Every row gives the best MB/s of its runs, the CPU both parties spent per MB (all processes and
// threads, see transport-cpu.mjs) and the busiest thread's ceiling (MB per CPU-second of that
// thread). On a shared machine the wall clock follows the other load; the CPU figures do not.
//
// usage: node scripts/bench/transport-knobs.mjs [--json] [--quick] [--only=raw|ours] [--filter=REGEX]
// (--filter matches "pair impl knob", e.g. --filter='node ours (defaults|chunkBytes)')
// (after `node scripts/build.mjs`; needs Debian chromium, like the browser tests)
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CHROMIUM, launch } from '../lib/chromium.mjs';
import { serveStatic } from '../lib/static-server.mjs';
import { cpuBetween, snapshot } from './transport-cpu.mjs';
import * as raw from './transport-raw.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const argv = process.argv.slice(2);
const json = argv.includes('--json');
const quick = argv.includes('--quick');
const only = argv.find((a) => a.startsWith('--only='))?.slice(7);
/** --filter=REGEX: only the cases whose "pair impl knob" matches. */
const filter = new RegExp(argv.find((a) => a.startsWith('--filter='))?.slice(9) ?? '');
const MIB = 1024 * 1024;
const TOTAL = (quick ? 16 : 32) * MIB;
const RUNS = quick ? 1 : 2;
const PEER = fileURLToPath(new URL('./transport-peer.mjs', import.meta.url));
const net = await import(pathToFileURL(join(root, 'dist', 'net', 'node.js')).href);

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="module">
  window.net = await import('/dist/net/index.js');
  window.raw = await import('/bench/transport-raw.mjs');
  window.netReady = true;
</script></head><body>webmpc transport knobs</body></html>`;

const results = [];
function report(row) {
  results.push(row);
  if (json) process.stdout.write(`${JSON.stringify(row)}\n`);
  else process.stderr.write(`knobs: ${row.pair} ${row.impl} ${row.knob}: ${row.mbps.toFixed(1)} MB/s, ${row.cpuMsPerMB.toFixed(1)} ms/MB\n`);
}

/** MB/s, CPU ms/MB and the busiest thread of `runs` timed calls of `once` (each moving TOTAL). */
async function timed(once) {
  const before = snapshot();
  let best = 0;
  for (let r = 0; r < RUNS; r++) best = Math.max(best, await once());
  const cpu = cpuBetween(before, snapshot());
  const megabytes = (RUNS * TOTAL) / 1e6;
  return {
    mbps: best,
    cpuMsPerMB: cpu ? (cpu.total * 1000) / megabytes : NaN,
    busiest: cpu?.busiest ? `${cpu.busiest.kind}/${cpu.busiest.comm}` : '',
    busiestCeiling: cpu?.busiest ? megabytes / cpu.busiest.cpu : NaN,
  };
}

if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found (scripts/setup.sh --browser installs it)`);
const server = await serveStatic({ '/dist/': join(root, 'dist'), '/bench/': join(root, 'scripts', 'bench') }, { '/': PAGE });
const signaling = await net.startSignalingServer();
const browser = await launch();
const context = browser.page.context();
const ndc = await import('node-datachannel/polyfill');

async function newPage() {
  const page = await context.newPage();
  await page.goto(`${server.url}/`);
  await page.waitForFunction(() => window.netReady === true, undefined, { timeout: 30_000 });
  return page;
}

/**
 * Bare data channels from a page to a page or to Node. `connections` > 1: that many peer
 * connections between the same two sides, the bytes split evenly and flooded at once.
 */
async function rawCase(pair, knob, options, flood, connections = 1) {
  if (!filter.test(`${pair} raw ${knob}`)) return;
  const pages = [];
  const nodePeers = [];
  try {
    // Adapters for connection `i` of a side: run transport-raw.mjs functions on its raw peer.
    const inPage = async () => {
      const page = await newPage();
      pages.push(page);
      return (i) => ({
        create: (o) => page.evaluate(({ o, i }) => void ((window.rawPeers ??= [])[i] = window.raw.createRawPeer(RTCPeerConnection, o)), { o, i }),
        call: (name, arg) => page.evaluate(({ name, arg, i }) => window.raw[name](window.rawPeers[i], arg), { name, arg, i }),
      });
    };
    const inNode = (i) => ({
      create: async (o) => void (nodePeers[i] = raw.createRawPeer(ndc.RTCPeerConnection, o)),
      call: async (name, arg) => raw[name](nodePeers[i], arg),
    });
    const sideA = await inPage();
    const sideB = pair === 'chromium-chromium' ? await inPage() : inNode;
    const links = [];
    for (let i = 0; i < connections; i++) {
      const [a, b] = [sideA(i), sideB(i)];
      await a.create(options);
      await b.create(options);
      await raw.connectRaw(a, b);
      links.push([a, b]);
    }
    const share = TOTAL / connections;
    const floodAll = async (bytes) => {
      await Promise.all(links.map(([, b]) => b.call('rawSink', bytes)));
      const t0 = performance.now();
      await Promise.all(links.map(([a]) => a.call('rawFlood', { ...flood, total: bytes })));
      return (bytes * connections) / 1e6 / ((performance.now() - t0) / 1000);
    };
    await floodAll((4 * MIB) / connections);
    report({ pair, impl: 'raw', knob, ...(await timed(() => floodAll(share))) });
  } catch (err) {
    process.stderr.write(`knobs: ${pair} raw ${knob} failed: ${err?.message ?? err}\n`);
  } finally {
    for (const peer of nodePeers) peer?.pc.close();
    for (const page of pages) await page.close().catch(() => {});
  }
}

/** Sends TOTAL bytes in 1 MiB messages to party 1, which acknowledges each; MB/s. */
async function sendMegabytes(t) {
  const message = new Uint8Array(MIB);
  const count = TOTAL / MIB;
  const t0 = performance.now();
  const acks = (async () => {
    for (let i = 0; i < count; i++) await t.recv(1, { timeoutMs: 300_000 });
  })();
  for (let i = 0; i < count; i++) await t.send(1, message);
  await acks;
  return TOTAL / 1e6 / ((performance.now() - t0) / 1000);
}

/** sendMegabytes as a page script (its constants inlined). */
const sendInPage = `(async () => { const MIB = ${MIB}, TOTAL = ${TOTAL}; return (${sendMegabytes.toString()})(window.t); })()`;

async function oursCase(pair, knob, options) {
  if (!filter.test(`${pair} ours ${knob}`)) return;
  const room = `knobs-${randomBytes(6).toString('hex')}`;
  const pages = [];
  let child;
  let t;
  try {
    // Party 1 echoes (transport-peer.mjs, or the same loop in a page); party 0 measures.
    if (pair === 'chromium-chromium') {
      const [a, b] = [await newPage(), await newPage()];
      pages.push(a, b);
      const connect = (page, party) =>
        page.evaluate(
          async ({ url, room, party, options }) => {
            window.t = await window.net.connectMesh({ signalingUrl: url, room, party, parties: 2, ...options });
          },
          { url: signaling.url, room, party, options },
        );
      await Promise.all([connect(a, 0), connect(b, 1)]);
      await b.evaluate(() => {
        void (async () => {
          for (;;) {
            const m = await window.t.recv(0, { timeoutMs: 600_000 });
            await window.t.send(0, m.byteLength <= 64 ? m : Uint8Array.of(1));
          }
        })().catch(() => {});
      });
      const run = () => a.evaluate(sendInPage);
      await run();
      report({ pair, impl: 'ours', knob, ...(await timed(run)) });
      await a.evaluate(() => window.t.close());
      return;
    }
    child = spawn(process.execPath, [PEER, 'node-datachannel', JSON.stringify({ root, options: { signalingUrl: signaling.url, room, party: 1, parties: 2, ...options } })], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (pair === 'chromium-node') {
      const a = await newPage();
      pages.push(a);
      await a.evaluate(
        async ({ url, room, options }) => {
          window.t = await window.net.connectMesh({ signalingUrl: url, room, party: 0, parties: 2, ...options });
        },
        { url: signaling.url, room, options },
      );
      const run = () => a.evaluate(sendInPage);
      await run();
      report({ pair, impl: 'ours', knob, ...(await timed(run)) });
      await a.evaluate(() => window.t.close());
    } else {
      t = await net.connectNodeMesh({ signalingUrl: signaling.url, room, party: 0, parties: 2, ...options });
      await sendMegabytes(t);
      report({ pair, impl: 'ours', knob, ...(await timed(() => sendMegabytes(t))) });
    }
  } catch (err) {
    process.stderr.write(`knobs: ${pair} ours ${knob} failed: ${err?.message ?? err}\n`);
  } finally {
    await t?.close();
    for (const page of pages) await page.close().catch(() => {});
    if (child) {
      await Promise.race([new Promise((r) => child.once('exit', r)), new Promise((r) => setTimeout(r, 5_000))]);
      child.kill('SIGKILL');
    }
  }
}

try {
  if (only !== 'ours') {
    for (const pair of ['chromium-chromium', 'chromium-node']) {
      await rawCase(pair, 'default (64 KiB messages, high 1 MiB, 1 ordered channel)', {}, {});
      for (const messageBytes of [16 * 1024, 256 * 1024]) await rawCase(pair, `message ${messageBytes / 1024} KiB`, {}, { messageBytes });
      for (const highWater of [256 * 1024, 8 * MIB]) await rawCase(pair, `high-water ${highWater / 1024} KiB`, {}, { highWater });
      for (const channels of [2, 4]) await rawCase(pair, `${channels} channels striped`, { channels }, {});
      await rawCase(pair, '2 peer connections', {}, {}, 2);
      await rawCase(pair, 'unordered', { ordered: false }, {});
    }
  }
  if (only !== 'raw') {
    for (const pair of ['chromium-chromium', 'chromium-node', 'node-node']) {
      await oursCase(pair, 'defaults', {});
      for (const chunkBytes of [16 * 1024, 256 * 1024]) await oursCase(pair, `chunkBytes ${chunkBytes / 1024} KiB`, { chunkBytes });
      for (const highWaterBytes of [256 * 1024, 4 * MIB]) await oursCase(pair, `highWaterBytes ${highWaterBytes / 1024} KiB`, { highWaterBytes });
      for (const receiveWindowBytes of [1 * MIB, 32 * MIB]) await oursCase(pair, `receiveWindowBytes ${receiveWindowBytes / MIB} MiB`, { receiveWindowBytes });
    }
  }
} finally {
  await browser.close();
  await signaling.close();
  await server.close();
}

if (!json) {
  const cols = ['pair', 'impl', 'knob', 'MB/s', 'cpu ms/MB', 'busiest thread', 'its ceiling MB/s'];
  const cells = results.map((r) => [r.pair, r.impl, r.knob, r.mbps.toFixed(1), r.cpuMsPerMB.toFixed(1), r.busiest, r.busiestCeiling.toFixed(0)]);
  const width = cols.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i].length)));
  const line = (row) => row.map((s, i) => s.padEnd(width[i])).join('  ');
  process.stdout.write(`${line(cols)}\n${line(width.map((w) => '-'.repeat(w)))}\n${cells.map(line).join('\n')}\n`);
}
process.exit(0);
