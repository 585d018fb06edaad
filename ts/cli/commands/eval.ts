/** `webmpc eval`: every party of a computation in this process, over in-memory transports. */
import type { Outputs } from '../../protocols/types.js';
import type { Traffic } from '../../traffic.js';
import { parseCommand } from '../args.js';
import { allInputs } from '../job.js';
import { cpuMsSince, printJson, printLines, roundMs, toHex } from '../output.js';
import { reportsParties } from '../protocols.js';
import { plan, runAll, runHelp, runOn, RUN_OPTIONS } from '../run.js';
import { loadSdk } from '../sdk.js';
import { trace, traceCounters } from '../../trace.js';


function usage(): string {
  return (
    'usage: webmpc eval --circuit FILE --input 1=HEX --input 2=HEX ... [--protocol NAME] [--owners LIST] [--json]\n' +
    '       webmpc eval --protocol mascot --program FILE --input 1=INT --input 2=INT ... [--json]\n' +
    '  Runs every party in this process over in-memory transports (a check of a circuit and of\n' +
    '  inputs before running it between machines with `webmpc party`) and prints each output value,\n' +
    '  one per line: circuits\' as big-endian hex, programs\' as decimal integers.\n' +
    '  --circuit FILE   Bristol Fashion text or a webmpc binary circuit (`webmpc circuit` writes\n' +
    '                   ready-made ones)\n' +
    '  --program FILE   the protocols computing on programs (mascot): the bytes of a webmpc/program\n' +
    '                   Program (`program.bytes`); it names its parties and who owns each input\n' +
    '  --input N=HEX    circuit input value N (numbered from 1, as in the circuit) as a hex number;\n' +
    '                   one for every input of the circuit\n' +
    '  --input N=INT    program input N (numbered from 1) as a decimal integer (negative for signed\n' +
    '                   inputs) or 0x-prefixed hex\n' +
    '  --owners LIST    the party owning each circuit input value, e.g. 0,0,1 (default: party N-1\n' +
    '                   owns input N)\n' +
    '  --parties N      the number of parties where the protocol takes more than two (default: the\n' +
    '                   highest owner + 1)\n' +
    '  --json           print {"outputs": [...], "protocol", "ms", "andGates", "traffic"} instead\n' +
    '                   (programs: no "andGates"; authgc and mascot: also "parties"); "traffic" has\n' +
    '                   each party\'s rounds, bytes and messages per phase (Session.traffic)\n' +
    `${runHelp()}`
  );
}

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommand(args, RUN_OPTIONS, usage());
  if (!parsed) return 0;
  const { values } = parsed;
  trace('eval', 'start', { sinceProcessStart: performance.now() });
  const sdk = await loadSdk();
  trace('eval', 'sdk loaded');
  // Every party runs here, so the module checks the run options as each of them will use them.
  const p = await plan(sdk, values, (parties) => [...Array(parties).keys()]);
  const { job } = p;
  try {
    const inputs = allInputs(job, values.input);
    const transports = sdk.createMemoryTransports(job.parties);
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    let results: Outputs[];
    const traffic: Traffic[] = [];
    try {
      results = await runAll(transports, (transport, party) =>
        runOn(sdk, p, transport, inputs.filter((_, i) => job.owners[i] === party), { closed: (s) => void (traffic[party] = s.traffic) }),
      );
    } finally {
      await Promise.all(transports.map((t) => t.close()));
    }
    const ms = performance.now() - t0;
    trace('eval', 'computed', { ms, cpuMs: cpuMsSince(cpu0) });
    traceCounters('eval');
    const outputs = job.print(agreed(results));
    if (values.json) {
      const parties = reportsParties(p.protocol) ? { parties: job.parties } : {};
      const andGates = job.andGates !== undefined ? { andGates: job.andGates } : {};
      printJson({ outputs, protocol: p.protocol, ...parties, ms: roundMs(ms), ...andGates, traffic });
    } else {
      // Every output is revealed to some party here, so none is null.
      printLines(outputs as string[]);
    }
    return 0;
  } finally {
    job.free();
  }
}

/**
 * Each output value as the parties it was revealed to got it (every output is revealed to some
 * party); they must all have got the same.
 */
function agreed(results: readonly Outputs[]): Outputs {
  return results[0]!.map((_, i) => {
    const seen = results.flatMap((r) => (r[i] === undefined ? [] : [r[i]!]));
    if (seen.some((v) => toHex(v) !== toHex(seen[0]!))) throw new Error('the parties disagree on the outputs (a bug)');
    return seen[0];
  });
}
