// CPU accounting for the transport benchmarks: the CPU time this process and all its descendants
// (bench peers, Chromium's browser, renderer and network-service processes) spent, per thread,
// read from Linux /proc. On a loaded machine wall-clock throughput mostly measures the other
// load; CPU time per megabyte is what the transport itself costs, and the busiest thread's share
// is the ceiling no amount of idle cores can lift. Elsewhere than Linux, snapshot() is undefined.
import { existsSync, readFileSync, readdirSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ: fixed at 100 on every Linux ABI that Node runs on

function readStat(path) {
  try {
    const text = readFileSync(path, 'utf8');
    const close = text.lastIndexOf(')');
    const fields = text.slice(close + 2).split(' ');
    return {
      comm: text.slice(text.indexOf('(') + 1, close),
      ppid: Number(fields[1]),
      cpu: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND,
    };
  } catch {
    return undefined; // The process or thread is gone.
  }
}

function descendants(root) {
  const children = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(`/proc/${entry}/stat`);
    if (!stat) continue;
    if (!children.has(stat.ppid)) children.set(stat.ppid, []);
    children.get(stat.ppid).push(Number(entry));
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) out.push(...(children.get(out[i]) ?? []));
  return out;
}

/** 'node', 'chromium:renderer', 'chromium:NetworkService', ... (the pid keeps processes apart). */
function processKind(pid) {
  try {
    let argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    // Chromium rewrites its argv into one space-separated string.
    if (argv.length === 1) argv = argv[0].split(' ');
    const type = argv.find((a) => a.startsWith('--type='))?.slice(7);
    const utility = argv.find((a) => a.startsWith('--utility-sub-type='))?.split('.').at(-1);
    if (/chrom/.test(argv[0] ?? '')) return `chromium:${utility ?? type ?? 'browser'}`;
    return (argv[0] ?? '?').split('/').at(-1);
  } catch {
    return '?';
  }
}

/** Per-thread CPU seconds of this process tree, or undefined without /proc. */
export function snapshot() {
  if (!existsSync('/proc/self/task')) return undefined;
  const threads = new Map();
  for (const pid of descendants(process.pid)) {
    const kind = processKind(pid);
    let tids = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      const stat = readStat(`/proc/${pid}/task/${tid}/stat`);
      if (stat) threads.set(`${pid}/${tid}`, { pid, kind, comm: stat.comm, cpu: stat.cpu });
    }
  }
  return threads;
}

/**
 * CPU spent between two snapshots: `total` seconds, `byKind` seconds per process kind (summed
 * over processes of that kind), and `busiest`, the thread that spent the most.
 */
export function cpuBetween(before, after) {
  if (!before || !after) return undefined;
  let total = 0;
  const byKind = {};
  let busiest;
  for (const [key, thread] of after) {
    const spent = thread.cpu - (before.get(key)?.cpu ?? 0);
    if (spent <= 0) continue;
    total += spent;
    byKind[thread.kind] = (byKind[thread.kind] ?? 0) + spent;
    if (!busiest || spent > busiest.cpu) busiest = { kind: thread.kind, comm: thread.comm, cpu: spent };
  }
  return { total, byKind, busiest };
}
