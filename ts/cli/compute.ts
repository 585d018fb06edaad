/**
 * Where a party's cryptography runs: `--threads N` and `--no-worker`, handed to `session()`,
 * and the line `party` prints about it.
 */
import type { Transport } from '../net/transport.js';
import { runsInWorker } from '../protocols/index.js';
import { defaultThreads, type Session, type SessionOptions } from '../session.js';
import { integerOption } from './args.js';
import { UsageError } from './errors.js';
import type { Sdk } from './sdk.js';

/** The `util.parseArgs` options. */
export const COMPUTE_OPTIONS = {
  threads: { type: 'string' },
  'no-worker': { type: 'boolean', default: false },
} as const;

/** Most threads `--threads` offers (a bound on a typo, far above any machine's useful count). */
const MAX_THREADS = 64;

export const COMPUTE_HELP =
  '  --threads N      parallel instances this party offers, each in an engine worker of its own\n' +
  '                   (default: the cores - 1, at most 8; 1 disables); the parties use as many\n' +
  '                   as the one offering the fewest\n' +
  '  --no-worker      compute on the main thread instead of in engine workers (then one thread)\n';

/** How one party computes. */
export interface Compute {
  /** In engine workers (the session's default), or on this thread. */
  readonly worker: boolean;
  /** Parallel instances offered (1 on this thread: instances each need a worker). */
  readonly threads: number;
  /** Why it computes on this thread, when it does. */
  readonly why?: string;
}

/** The values of {@link COMPUTE_OPTIONS}. */
export interface ComputeValues {
  readonly threads?: string | undefined;
  readonly 'no-worker'?: boolean | undefined;
}

/**
 * `--threads` and `--no-worker` for a run of `protocol`; without `--threads`, the session's own
 * default (so that what `party` prints is what it offers).
 */
export async function computeOptions(values: ComputeValues, protocol: string): Promise<Compute> {
  const threads = integerOption(values.threads, '--threads', 1, MAX_THREADS);
  if (values['no-worker']) {
    if (threads !== undefined && threads > 1) throw new UsageError('--threads above 1 needs engine workers: drop --no-worker');
    return { worker: false, threads: 1, why: '--no-worker' };
  }
  // A protocol that cannot run in an engine worker (the registry says which) computes on this
  // thread whatever the session is asked: do not start a worker it would not use.
  if (!runsInWorker(protocol)) return { worker: false, threads: 1, why: `${protocol} does not run in engine workers` };
  return { worker: true, threads: threads ?? (await defaultThreads()) };
}

/** `computing in engine workers, offering 3 threads`: what `party` says once, before computing. */
export function describeCompute(c: Compute): string {
  const offer = `offering ${c.threads} thread${c.threads === 1 ? '' : 's'}`;
  if (!c.worker) return `computing on the main thread (${c.why ?? 'no engine worker'}), ${offer}`;
  return `computing in ${c.threads === 1 ? 'an engine worker' : 'engine workers'}, ${offer}`;
}

/** Opens this party's session over `transport`, computing as `c` says. */
export function openSession(sdk: Sdk, transport: Transport, c: Compute): Promise<Session> {
  const options: SessionOptions = {
    transport,
    party: transport.party,
    parties: transport.parties,
    worker: c.worker,
    threads: c.threads,
  };
  return sdk.session(options);
}
