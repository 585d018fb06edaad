/** How `eval` and `party` print what they computed. */

/** Lower-case hex of `bytes`. */
export function toHex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

/** Milliseconds as printed in `--json` output: one decimal. */
export function roundMs(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** This process's CPU time (all threads) since `since` (`process.cpuUsage()`), in ms: for the trace. */
export function cpuMsSince(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
}

/** Prints one JSON object on a line of its own (`--json`: a script reads exactly one line). */
export function printJson(value: object): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** Prints each value on a line of its own. */
export function printLines(lines: readonly string[]): void {
  process.stdout.write(lines.map((l) => `${l}\n`).join(''));
}
