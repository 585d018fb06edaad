/**
 * SIGINT and SIGTERM: the long-running servers (`signal`, `enclave-server`) stop cleanly on
 * either; a running party tells the others why it stops, then exits 130 or 143.
 */
import { Interrupted } from './errors.js';

/** Resolves on SIGINT or SIGTERM. */
export function untilStopped(): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/**
 * Traps the first SIGINT or SIGTERM: calls `first` (which tells the peers, before anything else
 * does with a vaguer reason) and aborts `signal` with an {@link Interrupted}. A second signal
 * kills the process the default way. `release` restores the default handling.
 */
export function trapInterrupts(first: (signal: NodeJS.Signals) => void): { signal: AbortSignal; release(): void } {
  const interrupted = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted.signal.aborted) return;
    first(signal);
    interrupted.abort(new Interrupted(signal));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return {
    signal: interrupted.signal,
    release: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
