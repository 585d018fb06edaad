// Preloaded (`node --import`) into the CLI processes the benches start (./cli-mesh.mjs): on exit,
// writes the process's CPU time (user + system, every thread: getrusage RUSAGE_SELF) to stderr
// on a line of its own, so a bench can sum the CPU of parties it only sees from outside.
import { writeSync } from 'node:fs';

process.on('exit', () => {
  const u = process.cpuUsage();
  try {
    writeSync(2, `\nwebmpc-bench-cpu-ms ${((u.user + u.system) / 1000).toFixed(1)}\n`);
  } catch {
    // stderr gone: the bench reports the CPU as missing.
  }
});
