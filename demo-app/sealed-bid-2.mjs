#!/usr/bin/env node
// Sealed-bid second-price (Vickrey) auction between two bidders, each a separate Node process,
// over WebRTC through a local signaling server, with Yao's garbled circuits. Neither bidder's
// bid leaves its process in the clear; both learn who won and the price (the loser's bid).
//
//   node demo-app/sealed-bid-2.mjs [BID0 BID1]    bids: integers in [0, 2^32); random if omitted
//
// This launcher stands in for two machines: it picks or reads the bids, starts the signaling
// server and the two bidder processes, relays their public keys (the out-of-band key exchange
// two real bidders would do once), and prints what each bidder printed. Exit code: 0 ok, 1 the
// auction failed, 2 bad arguments.
import { fork } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { startSignalingServer } from '../dist/net/node.js';

const BIDDER = fileURLToPath(new URL('./bidder.mjs', import.meta.url));
const TIMEOUT_MS = 60_000;
const MAX_BID = 2 ** 32 - 1;

function parseBids(argv) {
  if (argv.length === 0) return [randomInt(0, 2 ** 32), randomInt(0, 2 ** 32)];
  if (argv.length !== 2 || !argv.every((a) => /^\d{1,10}$/.test(a) && Number(a) <= MAX_BID)) {
    return undefined;
  }
  return argv.map(Number);
}

/** Starts one bidder process; resolves with its result message, rejects if it fails. */
function startBidder(bidder, bid, signalingUrl, room, keys) {
  const child = fork(BIDDER, [], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  const prefix = (stream, out) => {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop();
      for (const line of lines) out.write(`[bidder ${bidder}] ${line}\n`);
    });
    stream.on('end', () => rest && out.write(`[bidder ${bidder}] ${rest}\n`));
  };
  prefix(child.stdout, process.stdout);
  prefix(child.stderr, process.stderr);
  let result;
  const done = new Promise((resolve, reject) => {
    child.on('message', (m) => {
      if (m?.type === 'key') keys.set(bidder, m.key);
      if (m?.type === 'result') result = m;
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0 && result) resolve(result);
      else reject(new Error(`bidder ${bidder} failed (${signal ?? `exit code ${code}`})`));
    });
  });
  child.send({ type: 'start', bidder, bid, signalingUrl, room });
  return { child, done };
}

async function main() {
  const bids = parseBids(process.argv.slice(2));
  if (!bids) {
    process.stderr.write(`usage: node demo-app/sealed-bid-2.mjs [BID0 BID1]  (integers in [0, ${MAX_BID}])\n`);
    return 2;
  }
  const t0 = performance.now();
  const signaling = await startSignalingServer({ port: 0 });
  const room = `auction-${randomBytes(6).toString('hex')}`;
  process.stdout.write(`Sealed-bid second-price auction, 2 bidders, 32-bit bids (ties go to bidder 0)\n`);
  process.stdout.write(`signaling server ${signaling.url}, room ${room}\n`);
  const keys = new Map();
  const bidders = bids.map((bid, i) => startBidder(i, bid, signaling.url, room, keys));
  // Relay the public keys once both are known: each bidder pins the other's.
  const relay = setInterval(() => {
    if (keys.size < 2) return;
    clearInterval(relay);
    bidders.forEach(({ child }, i) => child.connected && child.send({ type: 'peer-key', key: keys.get(1 - i) }));
  }, 5);
  const timer = setTimeout(() => {
    process.stderr.write(`the auction did not finish within ${TIMEOUT_MS / 1000} s; stopping the bidders\n`);
    for (const { child } of bidders) child.kill();
  }, TIMEOUT_MS);
  try {
    const results = await Promise.allSettled(bidders.map((b) => b.done));
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) {
      for (const { child } of bidders) if (child.exitCode === null) child.kill();
      throw failed.reason;
    }
    const [a, b] = results.map((r) => r.value);
    if (a.winner !== b.winner || a.price !== b.price) throw new Error('the bidders disagree on the result (a bug)');
    const setup = Math.max(a.setupMs, b.setupMs);
    const compute = Math.max(a.computeMs, b.computeMs);
    process.stdout.write(
      `result: bidder ${a.winner} wins and pays ${a.price} (the second-highest bid)\n` +
        `time: setup ${setup.toFixed(0)} ms (Wasm, keys, WebRTC, secure handshake), ` +
        `computation ${compute.toFixed(0)} ms (base OTs, garbling, evaluation; ${a.andGates} AND gates), ` +
        `total ${(performance.now() - t0).toFixed(0)} ms with process start-up\n`,
    );
    return 0;
  } finally {
    clearInterval(relay);
    clearTimeout(timer);
    await signaling.close();
  }
}

try {
  process.exitCode = await main();
} catch (error) {
  process.stderr.write(`sealed-bid: ${error?.message ?? error}\n`);
  process.exitCode = 1;
}
