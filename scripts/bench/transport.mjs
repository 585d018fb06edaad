// The `transport` suite: throughput (one 64 MiB message; 64 messages of 1 MiB) and small-message
// round-trip latency for every transport: in-memory, WebSocket (direct and through the relay),
// WebRTC in Node (node-datachannel, the one we ship, and @roamhq/wrtc for comparison),
// Chromium↔Chromium WebRTC (two tabs) and Chromium↔Node WebRTC, and the same two pairs through
// the WebSocket relay (`chromium-relay`, `chromium-node-relay`: the relay runs in the bench
// process). Node peers run in their own processes, over loopback; the throughput clock stops when the receiver's acknowledgement of the
// last byte arrives.
//
// Every throughput row comes with the CPU it cost (Linux only): `cpu_per_MB`, the CPU time of
// both parties' processes and threads per megabyte moved (ms/MB; on a shared machine this is
// what the transport costs, when the wall clock mostly measures the other load), and
// `busiest_thread_ceiling`, megabytes moved per CPU-second of the busiest single thread (MB/s):
// what that thread would allow with a core of its own, whatever the other cores do.
//
// Baseline for the WebRTC rows: bare data channels (`raw-datachannel`: 64 MiB in 64 KiB messages
// on one ordered channel, no framing, see transport-raw.mjs) between the same runtimes, with the
// ratio ours ÷ raw, and for Chromium the UDP packets per megabyte that its SCTP stack sends.
//
// The other engines, side by side with Chromium (TRANSPORT_ENGINES, default
// `chromium,firefox,webkit`, those installed): Firefox ESR↔Firefox and Firefox↔Node over WebRTC and
// the relay (runtime `firefox`), Chromium↔Firefox over WebRTC (`chromium-firefox`), WebKitGTK over
// the relay only (runtime `webkit`: Debian builds it without WebRTC). No CPU rows for these (the
// CPU marks need Playwright's exposeFunction). And protocol times per engine (runtime
// `wasm-<engine>`): yao2pc and authgc AES-128 and authgc SHA-256 between two tabs of the engine
// over its transport (WebRTC; the relay for WebKitGTK), sessions in their engine workers, median
// of the runs after a warm-up, without a secure channel.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { measure } from './transport-measure.mjs';
import { cpuBetween, snapshot } from './transport-cpu.mjs';
import * as raw from './transport-raw.mjs';

const SUITE = 'transport';
const PEER = fileURLToPath(new URL('./transport-peer.mjs', import.meta.url));
const MIB = 1024 * 1024;

/** A `mark` for measure(): CPU snapshots at each case's start and end. */
function cpuMarks() {
  const at = {};
  return {
    mark: async (name) => {
      at[name] = snapshot();
    },
    spent: (kase) => cpuBetween(at[`${kase}:start`], at[`${kase}:end`]),
  };
}

/** The CPU rows of one throughput case that moved `megabytes`. */
function cpuRows(row, kase, cpu, megabytes) {
  if (!cpu || cpu.total <= 0) return;
  row(kase, 'cpu_per_MB', (cpu.total * 1000) / megabytes, 'ms/MB');
  if (cpu.busiest) {
    row(kase, 'busiest_thread_ceiling', megabytes / cpu.busiest.cpu, 'MB/s', { thread: `${cpu.busiest.kind}/${cpu.busiest.comm}` });
  }
}

function rows(emit, runtime, impl, r, marks) {
  const row = (kase, metric, value, unit, extra = {}) => emit({ suite: SUITE, case: kase, metric, value, unit, runtime, impl, ...extra });
  row('64MiB-one-message', 'throughput', r.one, 'MB/s');
  cpuRows(row, '64MiB-one-message', marks?.spent('one'), r.megabytes);
  row('64MiB-in-1MiB-messages', 'throughput', r.many, 'MB/s');
  cpuRows(row, '64MiB-in-1MiB-messages', marks?.spent('many'), r.megabytes);
  row('32B-round-trip', 'latency_median', r.rtt, 'ms');
}

function spawnPeer(root, impl, options) {
  const child = spawn(process.execPath, [PEER, impl, JSON.stringify({ root, options })], { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return { child, exited };
}

async function stopPeer(peer) {
  await Promise.race([peer.exited, new Promise((r) => setTimeout(r, 5_000))]);
  peer.child.kill('SIGKILL');
}

async function nodePair(root, net, impl) {
  const room = `bench-${randomBytes(6).toString('hex')}`;
  if (impl === 'ws') {
    const listener = await net.listenWebSocket();
    const peer = spawnPeer(root, impl, { party: 0, parties: 2, session: room, peers: [undefined, listener.url] });
    const t = await net.connectWebSocketMesh({ party: 1, parties: 2, session: room, peers: [], listener });
    return { t, other: 0, peer, done: async () => {} };
  }
  const server = await net.startSignalingServer({ relay: impl === 'ws-relay' });
  const options =
    impl === 'ws-relay'
      ? { url: `${server.url}/relay`, room, party: 1, parties: 2 }
      : { signalingUrl: server.url, room, party: 1, parties: 2 };
  const peer = spawnPeer(root, impl, options);
  let t;
  if (impl === 'ws-relay') t = await net.connectNodeRelay({ ...options, party: 0 });
  else if (impl === '@roamhq/wrtc') {
    const wrtc = (await import('@roamhq/wrtc')).default;
    t = await net.connectNodeMesh({ ...options, party: 0, RTCPeerConnection: wrtc.RTCPeerConnection });
  } else t = await net.connectNodeMesh({ ...options, party: 0 });
  return { t, other: 1, peer, done: () => server.close() };
}

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="module">
  window.net = await import('/dist/net/index.js');
  window.bench = await import('/bench/transport-measure.mjs');
  window.raw = await import('/bench/transport-raw.mjs');
  window.netReady = true;
</script></head><body>webmpc transport bench</body></html>`;

/** A page of the bench, with `benchMark` (CPU snapshots in Node) exposed to it where the engine allows. */
async function openPage(browser, serverUrl, marks) {
  const page = browser.used ? await browser.newPage() : browser.page;
  browser.used = true;
  if (marks && typeof page.exposeFunction === 'function') await page.exposeFunction('benchMark', (name) => marks.mark(name));
  await page.goto(`${serverUrl}/`);
  await page.waitForFunction(() => window.netReady === true, undefined, { timeout: 30_000 });
  return page;
}

/** Joins `room` from the page: WebRTC through the signaling server `url`, or the relay at `url`/relay. */
const connectInPage = (page, url, room, party, relay = false) =>
  page.evaluate(
    async ({ url, room, party, relay }) => {
      window.t = relay
        ? await window.net.connectRelay({ url: `${url}/relay`, room, party, parties: 2 })
        : await window.net.connectMesh({ signalingUrl: url, room, party, parties: 2 });
    },
    { url, room, party, relay },
  );

const measureInPage = (page, quick) =>
  page.evaluate((quick) => window.bench.measure(window.t, 1, { quick, mark: window.benchMark }), quick);

/** Two tabs of one browser (or of two: `browserB`); B echoes like transport-peer.mjs, A measures. */
async function chromiumPair(browser, serverUrl, signalingUrl, quick, relay, browserB = browser) {
  const marks = browser.engine === 'chromium' && browserB === browser ? cpuMarks() : undefined;
  const pageA = await openPage(browser, serverUrl, marks);
  const pageB = await openPage(browserB, serverUrl, marks);
  const room = `bench-${randomBytes(6).toString('hex')}`;
  await Promise.all([connectInPage(pageA, signalingUrl, room, 0, relay), connectInPage(pageB, signalingUrl, room, 1, relay)]);
  await pageB.evaluate(() => {
    void (async () => {
      const ack = Uint8Array.of(1);
      for (;;) {
        const m = await window.t.recv(0, { timeoutMs: 600_000 });
        await window.t.send(0, m.byteLength <= 64 ? m : ack);
      }
    })().catch(() => {});
  });
  try {
    return { result: await measureInPage(pageA, quick), marks };
  } finally {
    await pageA.evaluate(() => window.t.close());
    await Promise.all([pageA.close(), pageB.close()]);
  }
}

/** Chromium↔Node: the page measures, a Node process (node-datachannel, or the relay client) echoes. */
async function chromiumNodePair(browser, serverUrl, signalingUrl, root, quick, relay) {
  const marks = browser.engine === 'chromium' ? cpuMarks() : undefined;
  const page = await openPage(browser, serverUrl, marks);
  const room = `bench-${randomBytes(6).toString('hex')}`;
  const peer = relay
    ? spawnPeer(root, 'ws-relay', { url: `${signalingUrl}/relay`, room, party: 1, parties: 2 })
    : spawnPeer(root, 'node-datachannel', { signalingUrl, room, party: 1, parties: 2 });
  try {
    await connectInPage(page, signalingUrl, room, 0, relay);
    return { result: await measureInPage(page, quick), marks };
  } finally {
    await page.evaluate(() => window.t?.close());
    await page.close();
    await stopPeer(peer);
  }
}

/** An adapter running transport-raw.mjs functions on the page's raw peer. */
function rawInPage(page) {
  return {
    create: (options) => page.evaluate((options) => void (window.rawPeer = window.raw.createRawPeer(RTCPeerConnection, options)), options),
    call: (name, arg) => page.evaluate(({ name, arg }) => window.raw[name](window.rawPeer, arg), { name, arg }),
  };
}

/** The same adapter for a raw peer in this process (node-datachannel). */
async function rawInNode() {
  const net = await import('node-datachannel/polyfill');
  let peer;
  return {
    create: async (options) => void (peer = raw.createRawPeer(net.RTCPeerConnection, options)),
    call: async (name, arg) => raw[name](peer, arg),
    close: () => peer?.pc.close(),
  };
}

/**
 * Bare data channels from `a` (a page) to `b`: best MB/s of `runs` floods of 64 MiB, CPU, and the
 * UDP packets per megabyte the page's peer connection sent and received.
 */
async function rawFloods(a, b, runs) {
  await a.create({});
  await b.create({});
  await raw.connectRaw(a, b);
  const total = 64 * MIB;
  await b.call('rawSink', 4 * MIB);
  await a.call('rawFlood', { total: 4 * MIB }); // warm-up
  await b.call('rawSink', total);
  const packets0 = await a.call('rawPackets');
  const cpu0 = snapshot();
  let best = 0;
  for (let r = 0; r < runs; r++) best = Math.max(best, await a.call('rawFlood', { total }));
  const cpu = cpuBetween(cpu0, snapshot());
  const packets1 = await a.call('rawPackets');
  const megabytes = (runs * total) / 1e6;
  const perMB = packets0 && packets1
    ? { sent: (packets1.packetsSent - packets0.packetsSent) / megabytes, received: (packets1.packetsReceived - packets0.packetsReceived) / megabytes }
    : undefined;
  return { best, cpu, megabytes, perMB };
}

async function chromiumRows(root, net, emit, quick) {
  const { CHROMIUM, launch } = await import('../lib/chromium.mjs');
  const { serveStatic } = await import('../lib/static-server.mjs');
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found (scripts/setup.sh --browser installs it)`);
  const server = await serveStatic({ '/dist/': join(root, 'dist'), '/bench/': join(root, 'scripts', 'bench') }, { '/': PAGE });
  // The relay runs in this process, beside the signaling it shares a port with.
  const signaling = await net.startSignalingServer({ relay: true });
  const browser = await launch();
  const ours = {};
  try {
    for (const [impl, run] of [
      ['chromium-native', () => chromiumPair(browser, server.url, signaling.url, quick, false)],
      ['chromium-node', () => chromiumNodePair(browser, server.url, signaling.url, root, quick, false)],
      ['chromium-relay', () => chromiumPair(browser, server.url, signaling.url, quick, true)],
      ['chromium-node-relay', () => chromiumNodePair(browser, server.url, signaling.url, root, quick, true)],
    ]) {
      try {
        const { result, marks } = await run();
        rows(emit, 'chromium', impl, result, marks);
        ours[impl] = result;
      } catch (err) {
        process.stderr.write(`bench transport: ${impl} failed: ${err?.stack ?? err}\n`);
      }
    }
    for (const [impl, ourImpl, far] of [
      ['raw-datachannel-chromium', 'chromium-native', 'page'],
      ['raw-datachannel-node', 'chromium-node', 'node'],
    ]) {
      let b;
      const pages = [];
      try {
        const newPage = async () => {
          const page = await browser.newPage();
          pages.push(page);
          await page.goto(`${server.url}/`);
          await page.waitForFunction(() => window.netReady === true, undefined, { timeout: 30_000 });
          return page;
        };
        const a = rawInPage(await newPage());
        b = far === 'page' ? rawInPage(await newPage()) : await rawInNode();
        const r = await rawFloods(a, b, quick ? 1 : 3);
        const row = (kase, metric, value, unit, extra = {}) =>
          emit({ suite: SUITE, case: kase, metric, value, unit, runtime: 'chromium', impl, ...extra });
        const kase = '64MiB-in-64KiB-messages';
        row(kase, 'throughput', r.best, 'MB/s');
        cpuRows(row, kase, r.cpu, r.megabytes);
        if (r.perMB) {
          row(kase, 'udp_packets_sent_per_MB', r.perMB.sent, 'packets/MB');
          row(kase, 'udp_packets_received_per_MB', r.perMB.received, 'packets/MB');
        }
        const mine = ours[ourImpl];
        if (mine) {
          emit({ suite: SUITE, case: '64MiB-in-1MiB-messages', metric: 'throughput_ratio_to_raw', value: mine.many / r.best, unit: 'x', runtime: 'chromium', impl: ourImpl });
        }
      } catch (err) {
        process.stderr.write(`bench transport: ${impl} failed: ${err?.stack ?? err}\n`);
      } finally {
        b?.close?.();
        for (const page of pages) await page.close().catch(() => {});
      }
    }
  } finally {
    await browser.close();
    await signaling.close();
    await server.close();
  }
}

/** The bench's SDK page: the protocols between two tabs over the engine's transport. */
const SDK_PAGE = `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="module">
  const [webmpc, net, circuits] = await Promise.all([import('/dist/index.js'), import('/dist/net/index.js'), import('/dist/circuit/index.js')]);
  await webmpc.init();
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  window.protocols = async ({ url, room, party, relay, runs }) => {
    const t = relay
      ? await net.connectRelay({ url: url + '/relay', room, party, parties: 2, recvTimeoutMs: 120000 })
      : await net.connectMesh({ signalingUrl: url, room, party, parties: 2, recvTimeoutMs: 120000 });
    const s = await webmpc.session({ transport: t, party, parties: 2 });
    const aes = circuits.aes128Circuit();
    const sha = circuits.sha256Circuit();
    const cases = [
      ['yao2pc-aes128', aes, 'yao2pc', [new Uint8Array(16).fill(1 + party)]],
      ['authgc-aes128', aes, 'authgc', [new Uint8Array(16).fill(1 + party)]],
      ['authgc-sha256', sha, 'authgc', [party === 0 ? new Uint8Array(64).fill(0x61) : new Uint8Array(32).fill(7)]],
    ];
    const out = {};
    try {
      for (const [name, c, protocol, inputs] of cases) {
        const times = [];
        for (let r = 0; r <= runs; r++) {
          const t0 = performance.now();
          await s.run(c, { protocol, inputs });
          if (r > 0) times.push(performance.now() - t0);
        }
        out[name] = median(times);
      }
    } finally {
      await s.close();
    }
    return out;
  };
  window.sdkReady = true;
</script></head><body>webmpc protocol bench</body></html>`;

/** Protocol times between two tabs of `browser` over its WebRTC (or the relay): medians in ms. */
async function protocolTimes(browser, serverUrl, signalingUrl, relay, quick) {
  const pages = [];
  try {
    for (let i = 0; i < 2; i++) {
      const page = await browser.newPage();
      pages.push(page);
      await page.goto(`${serverUrl}/sdk`);
      await page.waitForFunction(() => window.sdkReady === true, undefined, { timeout: 60_000 });
    }
    const room = `bench-${randomBytes(6).toString('hex')}`;
    const runs = quick ? 3 : 7;
    const [a] = await Promise.all(
      pages.map((page, party) => page.evaluate((o) => window.protocols(o), { url: signalingUrl, room, party, relay, runs })),
    );
    return a;
  } finally {
    for (const page of pages) await page.close().catch(() => {});
  }
}

/** Which engines the browser rows run: TRANSPORT_ENGINES, else every installed one. */
async function benchEngines() {
  const { ENGINES, engineAvailable } = await import('../lib/engines.mjs');
  const want = (process.env.TRANSPORT_ENGINES ?? ENGINES.join(',')).split(',').map((e) => e.trim()).filter(Boolean);
  return want.filter((e) => {
    if (engineAvailable(e)) return true;
    process.stderr.write(`bench transport: ${e} not installed (scripts/setup.sh --browser installs it); skipped\n`);
    return false;
  });
}

/**
 * Firefox ESR and WebKitGTK rows beside Chromium's, and every engine's protocol times. Chromium's
 * transport rows come from chromiumRows (with CPU and the raw baseline).
 */
async function engineRows(root, net, emit, quick, engines) {
  const { launchEngine } = await import('../lib/engines.mjs');
  const { serveStatic } = await import('../lib/static-server.mjs');
  const server = await serveStatic({ '/dist/': join(root, 'dist'), '/bench/': join(root, 'scripts', 'bench') }, { '/': PAGE, '/sdk': SDK_PAGE });
  const signaling = await net.startSignalingServer({ relay: true });
  const open = new Map();
  const browserOf = async (engine) => {
    if (!open.has(engine)) open.set(engine, await launchEngine(engine));
    return open.get(engine);
  };
  const WEBRTC = { chromium: true, firefox: true, webkit: false };
  try {
    for (const engine of engines) {
      const browser = await browserOf(engine);
      const cases = engine === 'chromium' ? [] : [
        ...(WEBRTC[engine]
          ? [
              [`${engine}-native`, () => chromiumPair(browser, server.url, signaling.url, quick, false)],
              [`${engine}-node`, () => chromiumNodePair(browser, server.url, signaling.url, root, quick, false)],
            ]
          : []),
        [`${engine}-relay`, () => chromiumPair(browser, server.url, signaling.url, quick, true)],
        [`${engine}-node-relay`, () => chromiumNodePair(browser, server.url, signaling.url, root, quick, true)],
      ];
      if (engine === 'firefox' && engines.includes('chromium')) {
        cases.push(['chromium-firefox', async () => chromiumPair(await browserOf('chromium'), server.url, signaling.url, quick, false, browser)]);
      }
      for (const [impl, run] of cases) {
        try {
          const { result, marks } = await run();
          rows(emit, impl === 'chromium-firefox' ? 'chromium-firefox' : engine, impl, result, marks);
        } catch (err) {
          process.stderr.write(`bench transport: ${impl} failed: ${err?.stack ?? err}\n`);
        }
      }
      try {
        const relay = !WEBRTC[engine];
        const times = await protocolTimes(browser, server.url, signaling.url, relay, quick);
        for (const [kase, ms] of Object.entries(times)) {
          emit({ suite: SUITE, case: kase, metric: 'time_median', value: ms, unit: 'ms', runtime: `wasm-${engine}`, impl: relay ? `${engine}-relay` : `${engine}-native` });
        }
      } catch (err) {
        process.stderr.write(`bench transport: ${engine} protocols failed: ${err?.stack ?? err}\n`);
      }
    }
  } finally {
    for (const b of open.values()) await b.close();
    await signaling.close();
    await server.close();
  }
}

/** The Node runtimes' rows: in-memory, WebSocket, relay, node-datachannel, @roamhq/wrtc. */
async function nodeRows(root, net, emit, quick) {
  {
    const [a, b] = net.createMemoryTransports(2);
    const echo = (async () => {
      for (;;) {
        const m = await b.recv(0, { timeoutMs: 600_000 }).catch(() => undefined);
        if (!m) return;
        await b.send(0, m.byteLength <= 64 ? m : Uint8Array.of(1));
      }
    })();
    const marks = cpuMarks();
    rows(emit, 'node', 'memory', await measure(a, 1, { quick, mark: marks.mark }), marks);
    await a.close();
    await b.close();
    await echo;
  }
  for (const impl of ['ws', 'ws-relay', 'node-datachannel', '@roamhq/wrtc']) {
    let pair;
    try {
      pair = await nodePair(root, net, impl);
      const marks = cpuMarks();
      rows(emit, 'node', impl, await measure(pair.t, pair.other, { quick, mark: marks.mark }), marks);
    } catch (err) {
      process.stderr.write(`bench transport: ${impl} failed: ${err?.stack ?? err}\n`);
    } finally {
      if (pair) {
        await pair.t.close();
        await stopPeer(pair.peer);
        await pair.done();
      }
    }
  }
}

export async function run({ root, emit, quick }) {
  const net = await import(pathToFileURL(join(root, 'dist', 'net', 'node.js')).href);
  // TRANSPORT_BROWSERS_ONLY=1: only the browser rows (the engines side by side).
  if (process.env.TRANSPORT_BROWSERS_ONLY !== '1') await nodeRows(root, net, emit, quick);
  const engines = await benchEngines();
  if (engines.includes('chromium')) {
    try {
      await chromiumRows(root, net, emit, quick);
    } catch (err) {
      process.stderr.write(`bench transport: chromium failed: ${err?.stack ?? err}\n`);
    }
  }
  try {
    await engineRows(root, net, emit, quick, engines);
  } catch (err) {
    process.stderr.write(`bench transport: engines failed: ${err?.stack ?? err}\n`);
  }
}
