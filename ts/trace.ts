/**
 * A timing trace for finding where a run's time goes, off unless the environment variable
 * `WEBMPC_TRACE` is set (to anything but `0`) in Node; never on in browsers. Lines go to stderr
 * as `webmpc-trace <clock> <where> <what> key=value ...`, where `<clock>` is milliseconds on
 * the wall clock (mod 10^6, so lines from several processes on one machine line up).
 *
 * What is traced are phases, counts, sizes and durations: never a message's bytes, a key or an
 * input. Counters (`traceCount`) are summed per name and printed by `traceCounters`, so hot
 * paths pay one branch when tracing is off.
 *
 * Browser-safe: no Node imports.
 */

const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;

/** Whether tracing is on (read once, at load). */
export const TRACING = env !== undefined && env.WEBMPC_TRACE !== undefined && env.WEBMPC_TRACE !== '' && env.WEBMPC_TRACE !== '0';

/** Milliseconds on the wall clock, with the monotonic clock's resolution. */
export function traceClock(): number {
  return performance.timeOrigin + performance.now();
}

type Fields = Readonly<Record<string, number | string | boolean | undefined>>;

function format(fields: Fields | undefined): string {
  if (!fields) return '';
  let out = '';
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    out += ` ${k}=${typeof v === 'number' && !Number.isInteger(v) ? v.toFixed(1) : String(v)}`;
  }
  return out;
}

/** Prints one trace line (when tracing is on). */
export function trace(where: string, what: string, fields?: Fields): void {
  if (!TRACING) return;
  console.error(`webmpc-trace ${(traceClock() % 1e6).toFixed(1)} ${where} ${what}${format(fields)}`);
}

const counters = new Map<string, number>();

/** Adds `n` to counter `name` (when tracing is on). */
export function traceCount(name: string, n = 1): void {
  if (!TRACING) return;
  counters.set(name, (counters.get(name) ?? 0) + n);
}

/** Prints every counter of this realm (thread) on one line and resets them. */
export function traceCounters(where: string): void {
  if (!TRACING || counters.size === 0) return;
  trace(where, 'counters', Object.fromEntries([...counters].sort(([a], [b]) => a.localeCompare(b))));
  counters.clear();
}
