// The `network` suite: authgc AES-128 under the shaped networks of scripts/lib/shaper.mjs
// (issue 20): every figure elsewhere in the benches was taken with all parties on one loopback.
//
//   binding-memory   n = 2, 3 parties in this process, one SDK AuthGcSession each (the authgc
//                    suite's bindingSession), every ordered pair over a shaped link of the
//                    profile (lan, continent, mobile, world: see the shaper for their figures
//                    and the world profile's source), and 'none' (no shaper, the reference).
//                    Wall ms per phase and in total, median of
//                    NETWORK_RUNS runs after a warm-up; phase times include the link delays.
//   cli-websocket    two `webmpc party --protocol authgc --transport websocket` processes (pinned
//                    keys, the secure channel on) as a user starts them, party 0 dialing party 1
//                    through the shaper's TCP forwarder at each of NETWORK_CLI_DELAYS ms one way
//                    (no rate limit). `compute` is the slower party's own --json ms.compute,
//                    `connect` its ms.connect, `wall` from starting both to both exiting (./cli-mesh.mjs).
//
// Environment: NETWORK_PROFILES ("none,lan,continent,mobile,world"), NETWORK_PARTIES ("2,3"),
// NETWORK_RUNS (3), NETWORK_CLI_DELAYS ("0,35"; empty: skip the CLI rows). --quick: one run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { profile, shapeTransports } from '../lib/shaper.mjs';
import { partyKeys, runCliMesh } from './cli-mesh.mjs';
import { bindingSession, circuitCase, load, PHASES, phaseMedians } from './authgc.mjs';
import { circuitsDir } from './baselines/cases.mjs';

const SUITE = 'network';
const list = (v, d) => (v ?? d).split(',').map((x) => x.trim()).filter(Boolean);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** One two-process AES-128 run, party 0 dialing party 1 through a forwarder at `delayMs` each way. */
export function cliRun(root, ids, delayMs) {
  const link = { delayMs, bitsPerSecond: Infinity };
  return runCliMesh({
    root,
    n: 2,
    circuit: join(circuitsDir(root), 'aes_128.txt'),
    inputs: (p) => [p === 0 ? '000102030405060708090a0b0c0d0e0f' : '00112233445566778899aabbccddeeff'],
    expected: '69c4e0d86a7b0430d8cdb78070b4c55a',
    link: () => link,
    ids,
    timeoutMs: 120_000,
  });
}

export async function run({ root, emit, quick }) {
  // 'none': the same sessions with nothing between the parties, the reference for the others.
  const NONE = { name: 'none', description: 'no shaper' };
  const profiles = list(process.env.NETWORK_PROFILES, 'none,lan,continent,mobile,world').map((p) => (p === 'none' ? NONE : profile(p)));
  const parties = list(process.env.NETWORK_PARTIES, '2,3').map(Number);
  const runs = quick ? 1 : Number(process.env.NETWORK_RUNS ?? 3);
  const delays = list(process.env.NETWORK_CLI_DELAYS, '0,35').map(Number);
  const log = (s) => process.stderr.write(`bench network: ${s}\n`);
  const row = (kase, metric, value, unit, impl, extra = {}) => emit({ suite: SUITE, case: kase, metric, value, unit, runtime: 'wasm-node', impl, ...extra });

  // 1. Every party in this process over shaped in-memory transports.
  const { sdk, w } = await load(root);
  const c = await circuitCase(root, 'aes128');
  const checked = sdk.prepareCircuit(c.text);
  const full = { ...c, inputBits: checked.inputWidths.reduce((a, b) => a + b, 0) };
  const prepared = new w.PreparedCircuit(checked.binary);
  try {
    for (const n of parties) {
      for (const prof of profiles) {
        const kase = `aes128-n${n}-${prof.name}`;
        log(`${kase} binding-memory (${prof.description})`);
        const wrap = prof === NONE ? undefined : (ts) => shapeTransports(ts, prof);
        await bindingSession(sdk, w, prepared, full, n, wrap); // warm-up
        const samples = [];
        for (let r = 0; r < runs; r++) samples.push(await bindingSession(sdk, w, prepared, full, n, wrap));
        const med = phaseMedians(samples, 'wall');
        for (const ph of [...PHASES, 'total']) row(`${kase}-${ph}`, 'time', med[ph], 'ms', 'binding-memory', { profile: prof.name });
      }
    }
  } finally {
    prepared.free();
    checked.free();
  }

  // 2. Two CLI processes through the TCP forwarder.
  if (delays.length > 0) {
    const scratch = mkdtempSync(join(tmpdir(), 'webmpc-bench-network-'));
    try {
      const ids = partyKeys(root, 2, scratch);
      for (const delayMs of delays) {
        const kase = `aes128-n2-cli-${delayMs}ms`;
        log(`${kase} cli-websocket (forwarder at ${delayMs} ms each way)`);
        try {
          const samples = [];
          for (let r = 0; r < runs; r++) samples.push(await cliRun(root, ids, delayMs));
          for (const m of ['compute', 'connect', 'wall', 'cpu']) row(`${kase}-${m}`, 'time', median(samples.map((s) => s[m])), 'ms', 'cli-websocket', { delay_ms: delayMs });
        } catch (e) {
          log(`${kase}: ${e.message}`);
          row(kase, 'failed', 1, '', 'cli-websocket', { error: String(e.message) });
        }
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
}
