// The `world` suite (issue 20, items 3 and 4): the seed paper's worldwide table reproduced, and
// the other protocols under the shaper's profiles (scripts/lib/shaper.mjs).
//
//   table8       authgc AES-128 and SHA-256 for n = WORLD_PARTIES (2…8), each party its own
//                `webmpc party --protocol authgc --transport websocket --json` process with
//                pinned keys (./cli-mesh.mjs), every dialled pair through its own forwarder with
//                the `world` profile's link for that pair (party p in Table 7's region p), then
//                the same with no delay (`none`, no rate limit) for the difference. Beside each
//                row, Table 8's WAN figures (WRK17, CCS 2017, appendix C: 36-core EC2 machines,
//                real routes) as runtime `wrk17-table8-wan`. Rows (impl `cli-websocket`):
//                  wall, compute, connect   under `world`: from spawning the n processes to the
//                                           last exit; the slowest party's own ms.compute and
//                                           ms.connect (--json);
//                  cpu                      every process's CPU time (user + system), summed;
//                  *_none                   the same with no delay;
//                  max_one_way              the largest one-way delay among the n parties' pairs
//                                           (the critical path's delay, if the slowest pair is on
//                                           it every round);
//                  network_wait             compute − compute_none: what the delays added;
//                  round_trips_est          network_wait ÷ (2 × max_one_way): an ESTIMATE of the
//                                           sequential round trips from wall clocks (counted
//                                           rounds come from the session layer, item 2), noisy
//                                           when the delays are small against the CPU noise;
//                  bytes_total, bytes_max_link   wire bytes through the forwarders (WebSocket
//                                           framing and the secure channel included), all
//                                           directed links and the busiest one;
//                  bandwidth_time           bytes_max_link ÷ the profile's 100 Mbit/s.
//                A budget (WORLD_TABLE_BUDGET_S, 660 s, leaving the rest of 15 minutes to the profiles) stops the table early: a case whose
//                predicted time (the last case's × the growth in n²) would overrun it gets a
//                `skipped` row instead.
//   profiles     every party in this process (SDK sessions over in-memory transports, each
//                ordered pair through the shaper's Transport wrapper) under none, lan,
//                continent, mobile and world, one run each from a fresh session:
//                  mascot   the Vickrey auction (webmpc/program's vickreyAuction, 2 parties,
//                           WORLD_VICKREY_BIDS = 2,4,8 bids of 32 bits): setup (base OTs and COPE,
//                           `preprocess('mascot', { triples: 0 })`) and the auction (its triples
//                           preprocessed from an empty store, then the online phase);
//                  yao2pc, teleport-yao (semi-honest; the simulation enclave-server in this
//                           process, beside the evaluator, its link not shaped)   AES-128: setup
//                           (`preprocess`) and the first and second runs.
//                Beside each step under a profile, `<step>_round_trips_est`: (its time − the
//                same step under none) ÷ the pair's round trip, again an estimate from wall clocks
//                (only for round trips ≥ 10 ms). One unrecorded warm-up pass under none first.
//
//   demo         the demo auction's own code (demo-app's `secureRoom` and `placeBid`, from the
//                Node build `demo-app/dist/node/{room,auction}.mjs` that `npm run demo` makes),
//                3 bidders (engine authgc, pinned keys) in this process over shaped in-memory
//                transports under none, continent and world, one run each after a warm-up: each
//                phase (securing = the key exchange, session, then the engine's phases), the
//                slowest bidder's, and `join_to_result`, from the start of the key exchange to
//                the last bidder's result. Not the demo's WebRTC (the shaper has no TURN-like
//                form yet): the connecting phase is not in it. Skipped (a `skipped` row) when the
//                demo is not built.
//
// Environment: WORLD_PARTIES ("2,3,4,5,6,7,8"), WORLD_CASES ("aes128,sha256"), WORLD_RUNS (1),
// WORLD_TABLE_BUDGET_S (660), WORLD_PROFILES ("none,lan,continent,mobile,world"),
// WORLD_VICKREY_BIDS ("2,4,8"), WORLD_PARTS ("table8,profiles,demo"), WORLD_DEMO_PROFILES ("none,continent,world"). --quick: n = 2, 3, bids 2, 4.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROFILES, profile, shapeTransports, worldDelayMs } from '../lib/shaper.mjs';
import { circuitsDir } from './baselines/cases.mjs';
import { partyKeys, runCliMesh } from './cli-mesh.mjs';

const SUITE = 'world';
const list = (v, d) => (v ?? d).split(',').map((x) => x.trim()).filter(Boolean);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Table 8 of Wang, Ranellucci, Katz, "Global-Scale Secure Multiparty Computation" (CCS 2017),
 * WAN columns (ms): setup, independent, dependent, online, total, for AES and SHA-256, n = 2…14.
 * Copied from the table as printed (/work/shared/papers/global-scale-mpc-wang-ranellucci-katz-ccs17.txt).
 */
export const TABLE8_WAN = {
  aes128: {
    2: [43.7, 286.7, 32.5, 12.1, 375.0],
    3: [213.6, 1455.1, 183.8, 66.0, 1918.5],
    4: [321.2, 1903.3, 319.2, 85.4, 2629.1],
    5: [727.8, 1988.6, 327.6, 82.7, 3126.7],
    6: [1151.8, 3432.1, 511.2, 87.8, 5182.9],
    7: [1459.5, 3986.6, 620.3, 90.8, 6157.2],
    8: [1767.7, 4189.7, 710.6, 100.4, 6768.4],
    9: [3279.2, 6237.3, 1356.2, 198.3, 11071.0],
    10: [4502.8, 6279.1, 1388.2, 200.7, 12370.8],
    11: [4709.8, 7083.2, 1534.9, 205.0, 13532.9],
    12: [4860.2, 7349.1, 1718.9, 232.1, 14160.3],
    13: [6703.6, 8531.2, 1932.3, 248.4, 17415.5],
    14: [8710.8, 9412.2, 1947.0, 250.2, 20320.2],
  },
  sha256: {
    2: [44.3, 1097.0, 205.2, 23.1, 1369.6],
    3: [213.7, 2939.7, 511.0, 87.8, 3752.2],
    4: [328.2, 3669.0, 786.5, 113.1, 4896.8],
    5: [728.4, 3953.5, 1101.1, 131.2, 5914.2],
    6: [1112.3, 6933.2, 1617.7, 149.8, 9813.0],
    7: [1455.3, 7862.8, 1765.8, 155.7, 11239.6],
    8: [1807.1, 8504.8, 2129.4, 185.0, 12626.3],
    9: [3274.6, 12712.0, 4705.4, 315.2, 21007.2],
    10: [4524.3, 12465.7, 6037.4, 328.9, 23356.3],
    11: [4752.5, 13432.2, 5501.9, 378.4, 24065.0],
    12: [4814.5, 16738.7, 6743.5, 437.9, 28734.6],
    13: [6682.9, 18355.0, 8879.7, 490.8, 34408.4],
    14: [8714.4, 18104.8, 8236.1, 480.2, 35535.5],
  },
};
const TABLE8_PHASES = ['setup', 'independent', 'dependent', 'online', 'total'];

/** Inputs (hex, big-endian as the CLI takes them): value i belongs to party i, the rest own none. */
const CIRCUITS = {
  aes128: {
    file: 'aes_128.txt',
    inputs: ['000102030405060708090a0b0c0d0e0f', '00112233445566778899aabbccddeeff'],
    expected: '69c4e0d86a7b0430d8cdb78070b4c55a',
  },
  sha256: {
    // One compression of the padded block of "abc" from the standard IV: SHA-256("abc").
    file: 'sha256.txt',
    inputs: [`61626380${'0'.repeat(118)}18`, '6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19'],
    expected: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
  },
};

const WORLD_BPS = PROFILES.world.link(0, 1).bitsPerSecond;
const NO_DELAY = { delayMs: 0, bitsPerSecond: Infinity };

/** The largest one-way delay among parties 0…n−1 under `world`. */
const maxOneWay = (n) => Math.max(...Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i < j ? worldDelayMs(i, j) : 0))).flat());

const load1 = () => loadavg()[0].toFixed(1);

export async function run({ root, emit, quick }) {
  const parts = new Set(list(process.env.WORLD_PARTS, 'table8,profiles,demo'));
  const log = (s) => process.stderr.write(`bench world: ${s} (load ${load1()})\n`);
  const row = (kase, metric, value, unit, impl, extra = {}, runtime = 'wasm-node') => emit({ suite: SUITE, case: kase, metric, value, unit, runtime, impl, ...extra });
  if (parts.has('table8')) await table8({ root, quick, log, row });
  if (parts.has('profiles')) await profiles({ root, quick, log, row });
  if (parts.has('demo')) await demo({ root, log, row });
}

/** The demo auction's phases under shaped links (see the header). */
async function demo({ root, log, row }) {
  const built = join(root, 'demo-app', 'dist', 'node');
  if (!existsSync(join(built, 'auction.mjs')) || !existsSync(join(built, 'room.mjs'))) {
    log('demo: skipped (demo-app/dist/node not built: run `npm run demo -- --build-only`)');
    row('demo-auction-3', 'skipped', 1, '', 'demo-memory', { reason: 'demo-app/dist/node not built' });
    return;
  }
  const auction = await import(pathToFileURL(join(built, 'auction.mjs')).href);
  const room = await import(pathToFileURL(join(built, 'room.mjs')).href);
  const dist = (f) => pathToFileURL(join(root, 'dist', f)).href;
  const sdk = await import(dist('index.js'));
  const secure = await import(dist('secure/index.js'));
  await sdk.init();
  const bids = [1200, 3400, 2300];
  const want = auction.vickreyReference(bids);
  const n = bids.length;
  const names = list(process.env.WORLD_DEMO_PROFILES, 'none,continent,world');
  for (const [pass, prof] of [['warm-up', 'none'], ...names.map((p) => ['measure', p])]) {
    const kase = `demo-auction-${n}-${prof}`;
    log(`${kase}${pass === 'warm-up' ? ' (warm-up)' : ''}`);
    const raw = sdk.createMemoryTransports(n, { recvTimeoutMs: 300_000 });
    const ts = prof === 'none' ? raw : shapeTransports(raw, profile(prof));
    const ids = await Promise.all(ts.map(() => secure.generateIdentity()));
    const roomName = `bench-${pass}-${prof}-${process.pid}`;
    try {
      const t0 = performance.now();
      const rs = await Promise.all(
        ts.map(async (t, seat) => {
          const clock = new auction.PhaseClock();
          clock.enter('securing');
          const pinned = ids.map((id, q) => (q === seat ? undefined : id.publicKey));
          const { transport } = await room.secureRoom({ transport: t, identity: ids[seat], room: roomName, pinned });
          const result = await auction.placeBid({ transport, bid: bids[seat], engine: 'authgc', clock });
          clock.end();
          return { result, phases: clock.records, at: performance.now() };
        }),
      );
      for (const r of rs) {
        if (r.result.winner !== want.winner || r.result.price !== want.price) throw new Error(`wrong result ${r.result.winner}/${r.result.price}`);
      }
      if (pass === 'warm-up') continue;
      const extra = { profile: prof, load: load1() };
      const phases = [...new Set(rs.flatMap((r) => r.phases.map((ph) => ph.phase)))];
      for (const ph of phases) {
        row(kase, ph, Math.max(...rs.map((r) => r.phases.filter((x) => x.phase === ph).reduce((a, x) => a + x.ms, 0))), 'ms', 'demo-memory', extra);
      }
      row(kase, 'join_to_result', Math.max(...rs.map((r) => r.at)) - t0, 'ms', 'demo-memory', extra);
    } catch (e) {
      log(`${kase}: ${e.message}`);
      row(kase, 'failed', 1, '', 'demo-memory', { profile: prof, error: String(e.message) });
    } finally {
      await Promise.all(ts.map((t) => t.close().catch(() => {})));
      for (const id of ids) secure.disposeIdentity(id);
    }
  }
}

/** Item 3: the worldwide table. */
async function table8({ root, quick, log, row }) {
  const parties = list(process.env.WORLD_PARTIES, quick ? '2,3' : '2,3,4,5,6,7,8').map(Number);
  const cases = list(process.env.WORLD_CASES, 'aes128,sha256');
  const runs = quick ? 1 : Number(process.env.WORLD_RUNS ?? 1);
  const budgetMs = Number(process.env.WORLD_TABLE_BUDGET_S ?? 660) * 1000;
  const started = performance.now();
  const scratch = mkdtempSync(join(tmpdir(), 'webmpc-bench-world-'));
  /** The last case's time per circuit, to predict the next one's (× (n'/n)²). */
  const last = new Map();
  try {
    const ids = partyKeys(root, Math.max(...parties), scratch);
    for (const n of parties) {
      for (const name of cases) {
        const kase = `${name}-n${n}`;
        const c = CIRCUITS[name];
        const paper = TABLE8_WAN[name][n];
        if (paper) for (const [k, ph] of TABLE8_PHASES.entries()) row(kase, ph === 'total' ? 'time' : `time_${ph}`, paper[k], 'ms', 'paper', { source: 'WRK17 Table 8, WAN' }, 'wrk17-table8-wan');
        const prev = last.get(name);
        const predicted = prev ? prev.ms * (n / prev.n) ** 2 : 0;
        const elapsed = performance.now() - started;
        if (elapsed + predicted > budgetMs) {
          log(`${kase}: skipped (${(elapsed / 1000).toFixed(0)} s spent, ~${(predicted / 1000).toFixed(0)} s predicted, budget ${budgetMs / 1000} s)`);
          row(kase, 'skipped', 1, '', 'cli-websocket', { reason: `time budget (WORLD_TABLE_BUDGET_S=${budgetMs / 1000})` });
          continue;
        }
        const t0 = performance.now();
        const one = (link) =>
          runCliMesh({
            root,
            n,
            circuit: join(circuitsDir(root), c.file),
            inputs: (p) => (p < c.inputs.length ? [c.inputs[p]] : []),
            expected: c.expected,
            link,
            ids,
          });
        try {
          const world = [];
          const none = [];
          const loads = [load1()];
          for (let r = 0; r < runs; r++) {
            log(`${kase} world, run ${r + 1}/${runs}`);
            world.push(await one(PROFILES.world.link));
            log(`${kase} none, run ${r + 1}/${runs}`);
            none.push(await one(() => NO_DELAY));
            loads.push(load1());
          }
          const med = (xs, k) => median(xs.map((x) => x[k]));
          const extra = { profile: 'world', load: loads.join('→') };
          const w = { wall: med(world, 'wall'), compute: med(world, 'compute'), connect: med(world, 'connect'), cpu: med(world, 'cpu') };
          const z = { wall: med(none, 'wall'), compute: med(none, 'compute'), connect: med(none, 'connect'), cpu: med(none, 'cpu') };
          for (const [k, v] of Object.entries(w)) row(kase, k, v, 'ms', 'cli-websocket', extra);
          for (const [k, v] of Object.entries(z)) row(kase, `${k}_none`, v, 'ms', 'cli-websocket', extra);
          const d = maxOneWay(n);
          const wait = w.compute - z.compute;
          row(kase, 'max_one_way', d, 'ms', 'cli-websocket', extra);
          row(kase, 'network_wait', wait, 'ms', 'cli-websocket', extra);
          row(kase, 'round_trips_est', wait / (2 * d), '', 'cli-websocket', extra);
          // Bytes: the world runs' (the protocol sends the same whatever the delays).
          const links = world[0].linkBytes;
          const total = links.reduce((a, l) => a + l.bytes, 0);
          const maxLink = Math.max(...links.map((l) => l.bytes));
          row(kase, 'bytes_total', total / 1024, 'KiB', 'cli-websocket', extra);
          row(kase, 'bytes_max_link', maxLink / 1024, 'KiB', 'cli-websocket', extra);
          row(kase, 'bandwidth_time', (maxLink * 8 * 1000) / WORLD_BPS, 'ms', 'cli-websocket', extra);
          if (paper) row(kase, 'ratio_to_paper', w.compute / paper[4], 'x', 'cli-websocket', { ...extra, of: 'compute' });
        } catch (e) {
          log(`${kase}: ${e.message}`);
          row(kase, 'failed', 1, '', 'cli-websocket', { error: String(e.message) });
        }
        last.set(name, { n, ms: performance.now() - t0 });
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Item 4: MASCOT's Vickrey, yao2pc and teleport-yao under each profile, parties in this process. */
async function profiles({ root, quick, log, row }) {
  const dist = (f) => pathToFileURL(join(root, 'dist', f)).href;
  const sdk = await import(dist('index.js'));
  const programs = await import(dist('program/index.js'));
  const { startEnclaveServer } = await import(dist('enclave/server.js'));
  await sdk.init();
  const names = list(process.env.WORLD_PROFILES, 'none,lan,continent,mobile,world');
  const bidsList = list(process.env.WORLD_VICKREY_BIDS, quick ? '2,4' : '2,4,8').map(Number);
  const sid = (id) => new Uint8Array(createHash('sha256').update(`webmpc-bench-world/${id}`).digest());
  const aes = CIRCUITS.aes128;
  const circuit = sdk.prepareCircuit(readFileSync(join(circuitsDir(root), aes.file), 'utf8'));
  const aesInputs = aes.inputs.map((h) => Uint8Array.from(Buffer.from(h, 'hex')));
  const server = await startEnclaveServer({ backend: 'simulation', port: 0, log: () => {}, maxSessions: 64 });
  const net = await import(dist('net/node.js'));
  const policy = { simulatedMeasurements: [server.measurement] };
  const enclaveOf = async (party) => ({
    ...(party === 1 ? { url: server.url, WebSocket: await net.nodeWebSocket() } : {}),
    policy,
    allowSimulatedEnclave: true,
  });

  /** Two sessions over (shaped) in-memory transports; `f(session, party)` per party; ms per step. */
  const pair = async (prof, id, f) => {
    const raw = sdk.createMemoryTransports(2, { recvTimeoutMs: 300_000 });
    const ts = prof === 'none' ? raw : shapeTransports(raw, profile(prof));
    try {
      const results = await Promise.all(
        ts.map(async (t, party) => {
          const s = await sdk.session({ transport: t, party, parties: 2, sessionId: sid(`${id}/${prof}`) });
          try {
            return await f(s, party);
          } finally {
            s.free();
          }
        }),
      );
      return results;
    } finally {
      await Promise.all(ts.map((t) => t.close().catch(() => {})));
    }
  };
  const timed = async (steps) => {
    const out = {};
    for (const [k, g] of steps) {
      const t0 = performance.now();
      out[k] = { result: await g(), ms: performance.now() - t0 };
    }
    return out;
  };
  /** Per step, the slower party's time. */
  const slowest = (results, k) => Math.max(...results.map((r) => r[k].ms));
  /** Step times under 'none' by case and step, for the round-trip estimates of the other profiles. */
  const base = new Map();
  /** Emits a step's time and, beside 'none', (time − time under none) ÷ the pair's round trip. */
  const step = (kase, prof, k, ms, impl, extra) => {
    if (extra.warmUp) return;
    row(`${kase}-${prof}`, k, ms, 'ms', impl, extra);
    if (prof === 'none') base.set(`${kase}/${k}`, ms);
    const zero = base.get(`${kase}/${k}`);
    const rtt = prof === 'none' ? 0 : 2 * profile(prof).link(0, 1).delayMs;
    // Below 10 ms a round trip is lost in the CPU noise of a loaded machine: no estimate.
    if (rtt >= 10 && zero !== undefined) {
      row(`${kase}-${prof}`, `${k}_round_trips_est`, (ms - zero) / rtt, '', impl, extra);
    }
  };

  try {
    // A warm-up pass first (not recorded): the first sessions in a process pay for compiling
    // and tiering up the Wasm, which would otherwise land on whichever profile comes first.
    for (const [pass, prof] of [['warm-up', 'none'], ...names.map((p) => ['measure', p])]) {
      const warmUp = pass === 'warm-up';
      const extra = { profile: prof, load: load1(), ...(warmUp ? { warmUp } : {}) };
      // MASCOT: the Vickrey auction.
      for (const bids of warmUp ? bidsList.slice(0, 1) : bidsList) {
        const kase = `vickrey-${bids}-bids-2p`;
        log(`${kase}-${prof}${warmUp ? ' (warm-up)' : ''}`);
        try {
          const auction = await programs.vickreyAuction({ parties: 2, bids, bits: 32 });
          const bidsOf = (party) => auction.inputsOf(party).map((i) => BigInt((i * 2654435761) % 1000003));
          const want = programs.vickreyReference([...Array(bids).keys()].map((i) => BigInt((i * 2654435761) % 1000003)));
          const rs = await pair(prof, warmUp ? `${kase}/warm-up` : kase, (s, party) =>
            timed([
              ['setup', () => s.preprocess('mascot', { triples: 0 })],
              ['auction', () => s.run(auction, { protocol: 'mascot', inputs: auction.encodeInputs(party, bidsOf(party)) })],
            ]),
          );
          for (const r of rs) {
            const [winner, price] = auction.decodeOutputs(r.auction.result);
            if (winner !== BigInt(want.winner) || price !== want.price) throw new Error(`wrong auction result ${winner}/${price}`);
          }
          for (const k of ['setup', 'auction']) step(kase, prof, k, slowest(rs, k), 'mascot-memory', extra);
        } catch (e) {
          log(`${kase}: ${e.message}`);
          row(`${kase}-${prof}`, 'failed', 1, '', 'mascot-memory', { ...extra, error: String(e.message) });
        }
      }
      // yao2pc and teleport-yao, AES-128.
      for (const protocol of ['yao2pc', 'teleport-yao']) {
        const kase = `aes128-${protocol}`;
        log(`${kase}-${prof}${warmUp ? ' (warm-up)' : ''}`);
        try {
          const rs = await pair(prof, warmUp ? `${kase}/warm-up` : kase, async (s, party) => {
            const opts = protocol === 'yao2pc' ? { protocol } : { protocol, mode: 'semi-honest', enclave: await enclaveOf(party) };
            const pre = protocol === 'yao2pc' ? { garbler: 0 } : { garbler: 0, enclave: opts.enclave };
            const runOnce = async () => {
              const o = await s.run(circuit, { inputs: [aesInputs[party]], ...opts });
              if (Buffer.from(o[0]).toString('hex') !== aes.expected) throw new Error('wrong AES output');
            };
            return timed([
              ['setup', () => s.preprocess(protocol, pre)],
              ['first', runOnce],
              ['second', runOnce],
            ]);
          });
          for (const k of ['setup', 'first', 'second']) step(kase, prof, k, slowest(rs, k), `${protocol}-memory`, extra);
        } catch (e) {
          log(`${kase}: ${e.message}`);
          row(`${kase}-${prof}`, 'failed', 1, '', `${protocol}-memory`, { ...extra, error: String(e.message) });
        }
      }
    }
  } finally {
    circuit.free();
    await server.close();
  }
}
