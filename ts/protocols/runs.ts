/**
 * Many independent runs of one job, one after another through one protocol context: what
 * `Session.runMany` does on a thread (the session's own, in-thread; an engine worker for its
 * chunk of the runs). Shared by both so the two cannot drift.
 */
import type { CircuitJob, Outputs, Params, ProgramJob, ProtocolContext } from './types.js';

/**
 * Runs `job` once per entry of `runs` (this party's inputs for that run), in order, through
 * `run`; the protocol's state (e.g. a Yao setup) is the context's, so it is set up once and
 * reused. Progress of `'evaluating'` counts over all the runs (run r's gate g is
 * `r · gates + g` of `runs.length · gates`); other phases are passed on as they come.
 */
export async function runEach<J extends CircuitJob<Params> | ProgramJob<Params>>(
  run: (ctx: ProtocolContext<unknown>, job: J) => Promise<Outputs>,
  ctx: ProtocolContext<unknown>,
  job: J,
  runs: readonly (readonly Uint8Array[])[],
): Promise<Outputs[]> {
  const results: Outputs[] = [];
  for (const [r, inputs] of runs.entries()) {
    // A context that reads and writes the same state (its accessors live on the prototype: a
    // spread copy would snapshot the state and lose a setup made in the first run).
    const each = Object.create(ctx, {
      progress: {
        value: (phase: string, done: number, total: number) =>
          phase === 'evaluating' ? ctx.progress(phase, r * total + done, runs.length * total) : ctx.progress(phase, done, total),
      },
    }) as ProtocolContext<unknown>;
    results.push(await run(each, { ...job, inputs }));
  }
  return results;
}
