// The `transport` suite: throughput (one 64 MiB message; 64 messages of 1 MiB) and small-message
// round-trip latency for every transport: in-memory, WebSocket (direct and through the relay),
// WebRTC in Node (node-datachannel, the one we ship, and @roamhq/wrtc for comparison), and
// Chromium↔Chromium WebRTC (two tabs). Node peers run in two processes, over loopback; the
// throughput clock stops when the receiver's acknowledgement of the last byte arrives.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { measure } from './transport-measure.mjs';

const SUITE = 'transport';
const PEER = fileURLToPath(new URL('./transport-peer.mjs', import.meta.url));
const MIB = 1024 * 1024;

function rows(emit, runtime, impl, r) {
  const row = (kase, metric, value, unit) => emit({ suite: SUITE, case: kase, metric, value, unit, runtime, impl });
  row('64MiB-one-message', 'throughput', r.one, 'MB/s');
  row('64MiB-in-1MiB-messages', 'throughput', r.many, 'MB/s');
  row('32B-round-trip', 'latency_median', r.rtt, 'ms');
}

function spawnPeer(root, impl, options) {
  const child = spawn(process.execPath, [PEER, impl, JSON.stringify({ root, options })], { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return { child, exited };
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
  window.netReady = true;
</script></head><body>webmpc transport bench</body></html>`;

async function chromiumPair(root, net, quick) {
  const { CHROMIUM, launch } = await import('../lib/chromium.mjs');
  const { serveStatic } = await import('../lib/static-server.mjs');
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found (scripts/setup.sh --browser installs it)`);
  const server = await serveStatic({ '/dist/': join(root, 'dist'), '/bench/': join(root, 'scripts', 'bench') }, { '/': PAGE });
  const signaling = await net.startSignalingServer();
  const browser = await launch();
  try {
    const pageA = browser.page;
    const pageB = await pageA.context().newPage();
    for (const page of [pageA, pageB]) {
      await page.goto(`${server.url}/`);
      await page.waitForFunction(() => window.netReady === true, undefined, { timeout: 30_000 });
    }
    const room = `bench-${randomBytes(6).toString('hex')}`;
    const connect = (page, party) =>
      page.evaluate(
        async ({ url, room, party }) => {
          window.t = await window.net.connectMesh({ signalingUrl: url, room, party, parties: 2 });
        },
        { url: signaling.url, room, party },
      );
    await Promise.all([connect(pageA, 0), connect(pageB, 1)]);
    // B echoes like transport-peer.mjs; A measures.
    await pageB.evaluate(() => {
      void (async () => {
        const ack = Uint8Array.of(1);
        for (;;) {
          const m = await window.t.recv(0, { timeoutMs: 600_000 });
          await window.t.send(0, m.byteLength <= 64 ? m : ack);
        }
      })().catch(() => {});
    });
    const result = await pageA.evaluate((quick) => window.bench.measure(window.t, 1, { quick }), quick);
    await pageA.evaluate(() => window.t.close());
    return result;
  } finally {
    await browser.close();
    await signaling.close();
    await server.close();
  }
}

export async function run({ root, emit, quick }) {
  const net = await import(pathToFileURL(join(root, 'dist', 'net', 'node.js')).href);
  {
    const [a, b] = net.createMemoryTransports(2);
    const echo = (async () => {
      for (;;) {
        const m = await b.recv(0, { timeoutMs: 600_000 }).catch(() => undefined);
        if (!m) return;
        await b.send(0, m.byteLength <= 64 ? m : Uint8Array.of(1));
      }
    })();
    rows(emit, 'node', 'memory', await measure(a, 1, { quick }));
    await a.close();
    await b.close();
    await echo;
  }
  for (const impl of ['ws', 'ws-relay', 'node-datachannel', '@roamhq/wrtc']) {
    let pair;
    try {
      pair = await nodePair(root, net, impl);
      rows(emit, 'node', impl, await measure(pair.t, pair.other, { quick }));
    } catch (err) {
      process.stderr.write(`bench transport: ${impl} failed: ${err?.stack ?? err}\n`);
    } finally {
      if (pair) {
        await pair.t.close();
        await Promise.race([pair.peer.exited, new Promise((r) => setTimeout(r, 5_000))]);
        pair.peer.child.kill('SIGKILL');
        await pair.done();
      }
    }
  }
  try {
    rows(emit, 'chromium', 'chromium-native', await chromiumPair(root, net, quick));
  } catch (err) {
    process.stderr.write(`bench transport: chromium failed: ${err?.stack ?? err}\n`);
  }
}
