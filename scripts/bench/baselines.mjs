// The `baselines` suite: the peers of issue 11's authenticated-garbling benchmark, alone, in the
// standard row format, so their figures can be run and checked before (and then beside) ours.
// Circuits: AES-128 and SHA-256 from /work/shared/circuits/bristol_fashion; input value i
// belongs to party i, parties beyond the second contribute no input (./baselines/cases.mjs);
// every party receives the output and every run's output is checked against the known answer.
//
//   runtime 'emp-wasm'        emp-wasm (npm devDependency): impl '<mode>-<shape>', mode '2pc'
//                             (emp-ag2pc, 2 parties) or 'mpc' (emp-agmpc, 2-4 parties); shape
//                             'one-process' (all parties in one Node process, in-memory queues)
//                             or 'process-per-party' (one Node process each, the SDK's WebSocket
//                             mesh on loopback). See ./baselines/emp-wasm.mjs.
//   runtime 'polytune-native' polytune (crates.io), all parties in one process: impl
//                             'one-thread' or 'multi-thread' (tokio). See ./baselines/polytune.mjs.
//   runtime 'polytune-wasm'   the same one-thread code compiled to wasm32, in this Node process.
//
// Metrics per case (`<circuit>-n<parties>`): time (median of `runs` runs after one warm-up, ms),
// communication (all parties' bytes sent, KiB), communication_per_and_per_party (bytes/AND),
// for polytune-wasm ratio_wasm_to_native, and for emp-wasm one-process instantiate_per_call (the
// fresh emp instance every secureMPC call makes, included in its time). A configuration that fails (emp '2pc' on SHA-256
// fails its check with "FEQ error") gives a `failed` row with the error, not a crash.
//
// Environment: BASELINES_PARTIES (default "2,3,4"), BASELINES_CASES ("aes128,sha256"),
// BASELINES_RUNS (3; 1 with --quick), BASELINES_ONLY (a comma list of emp-wasm, polytune-native,
// polytune-wasm), BASELINES_SHAPES ("one-process,process-per-party").
import { runEmpWasm } from './baselines/emp-wasm.mjs';
import { runPolytuneNative, runPolytuneWasm } from './baselines/polytune.mjs';

const SUITE = 'baselines';
const list = (v, d) => (v ?? d).split(',').map((s) => s.trim()).filter(Boolean);

export async function run({ root, emit, quick }) {
  const parties = list(process.env.BASELINES_PARTIES, '2,3,4').map(Number);
  const cases = list(process.env.BASELINES_CASES, 'aes128,sha256');
  const runs = Number(process.env.BASELINES_RUNS ?? (quick ? 1 : 3));
  const only = new Set(list(process.env.BASELINES_ONLY, 'emp-wasm,polytune-native,polytune-wasm'));
  const shapes = list(process.env.BASELINES_SHAPES, 'one-process,process-per-party');
  const row = (r) => emit({ suite: SUITE, ...r });
  const log = (s) => process.stderr.write(`bench baselines: ${s}\n`);
  const failed = (kase, runtime, impl, error) => {
    log(`${kase} ${runtime} ${impl} failed: ${error}`);
    row({ case: kase, metric: 'failed', value: 1, unit: '', runtime, impl, error: String(error) });
  };
  const perf = (kase, runtime, impl, r, n) => {
    row({ case: kase, metric: 'time', value: r.median, unit: 'ms', runtime, impl });
    row({ case: kase, metric: 'communication', value: r.bytes / 1024, unit: 'KiB', runtime, impl });
    row({ case: kase, metric: 'communication_per_and_per_party', value: r.bytes / n / r.and, unit: 'bytes/AND', runtime, impl });
  };

  // 1. polytune, native (both impls in one run of its binary).
  const native = new Map();
  if (only.has('polytune-native')) {
    try {
      log('polytune-native: building (cached) and running');
      for (const r of runPolytuneNative({ root, cases, parties, runs })) {
        row(r);
        if (r.metric === 'time') native.set(`${r.case}/${r.impl}`, r.value);
      }
    } catch (e) {
      failed(cases.join('+'), 'polytune-native', 'all', e.message);
    }
  }

  // 2. polytune, wasm32 in this process.
  if (only.has('polytune-wasm')) {
    for (const c of cases) {
      for (const n of parties) {
        const kase = `${c}-n${n}`;
        try {
          log(`polytune-wasm ${kase}`);
          const r = await runPolytuneWasm({ root, caseName: c, parties: n, runs });
          perf(kase, 'polytune-wasm', 'one-thread', r, n);
          const nat = native.get(`${kase}/one-thread`);
          if (nat) row({ case: kase, metric: 'ratio_wasm_to_native', value: r.median / nat, unit: 'x', runtime: 'polytune-wasm', impl: 'one-thread' });
        } catch (e) {
          failed(kase, 'polytune-wasm', 'one-thread', e.message);
        }
      }
    }
  }

  // 3. emp-wasm: '2pc' for 2 parties, 'mpc' for every party count, in each shape.
  if (only.has('emp-wasm')) {
    for (const c of cases) {
      for (const n of parties) {
        for (const mode of n === 2 ? ['2pc', 'mpc'] : ['mpc']) {
          for (const shape of shapes) {
            const kase = `${c}-n${n}`;
            const impl = `${mode}-${shape}`;
            try {
              log(`emp-wasm ${kase} ${impl}`);
              const r = await runEmpWasm({ root, caseName: c, parties: n, mode, shape, runs });
              perf(kase, 'emp-wasm', impl, r, n);
              if (r.instantiateMs !== undefined) row({ case: kase, metric: 'instantiate_per_call', value: r.instantiateMs, unit: 'ms', runtime: 'emp-wasm', impl });
            } catch (e) {
              failed(kase, 'emp-wasm', impl, e.message);
            }
          }
        }
      }
    }
  }
}
