/**
 * What `eval` and `party` share: the options that say what to compute and how, settled into a
 * {@link Plan} before anything connects, and one party's run of it over a transport.
 */
import type { Transport } from '../net/transport.js';
import type { Outputs } from '../protocols/types.js';
import type { RunOptions, Session } from '../session.js';
import { computeOptions, COMPUTE_HELP, COMPUTE_OPTIONS, openSession, type Compute, type ComputeValues } from './compute.js';
import { JOB_OPTIONS, loadJob, type Job, type JobValues } from './job.js';
import { checkRoles, protocolHelp, protocolNamed, roleHelp, roleOptions, ROLE_OPTIONS, type FlagValues, type Protocol, type ProtocolModule } from './protocols.js';
import type { Sdk } from './sdk.js';
import { trace } from '../trace.js';

/** The `util.parseArgs` options of `eval` and `party` alike. */
export const RUN_OPTIONS = {
  ...JOB_OPTIONS,
  ...ROLE_OPTIONS,
  ...COMPUTE_OPTIONS,
  json: { type: 'boolean', default: false },
} as const;

/** `--help` lines of the options {@link RUN_OPTIONS} adds beyond what to compute. */
export function runHelp(): string {
  return `${protocolHelp()}${COMPUTE_HELP}\n${roleHelp()}`;
}

/** Everything a party's run needs besides its transport and inputs, checked. */
export interface Plan {
  readonly protocol: Protocol;
  readonly module: ProtocolModule;
  readonly job: Job;
  /** The protocol's run options (`garbler`, `enclave`, ...), from their flags. */
  readonly roles: Record<string, unknown>;
  readonly compute: Compute;
}

/**
 * Settles the protocol (from the registry), the circuit or program it computes on, its run
 * options and where it computes. `parties`: the parties that will run here (eval: all of them;
 * party: itself), whose view of the run options the module checks. The caller frees `job`.
 */
export async function plan(
  sdk: Sdk,
  values: FlagValues & JobValues & ComputeValues & { readonly protocol: string },
  partiesHere: (parties: number) => readonly number[],
): Promise<Plan> {
  const { protocol, module } = protocolNamed(values.protocol);
  const compute = await computeOptions(values, protocol);
  const job = await loadJob(sdk, protocol, module, values);
  try {
    const roles = await roleOptions(module, values, { protocol, parties: job.parties });
    for (const p of partiesHere(job.parties)) checkRoles(module, roles, p, job.parties);
    return { protocol, module, job, roles, compute };
  } catch (error) {
    job.free();
    throw error;
  }
}

/**
 * Party `transport.party`'s run of `plan` with its own `inputs`: opens its session, runs, and
 * closes the session (its engine workers with it). `opened` sees the session before it runs,
 * `closed` after it closed (its traffic figures stay readable).
 * On failure the session's transport is already closed with the reason (the session does that,
 * so the peers stop too); the caller may close it with a better one first (an interrupt).
 */
export async function runOn(
  sdk: Sdk,
  p: Plan,
  transport: Transport,
  inputs: readonly Uint8Array[],
  options: { signal?: AbortSignal; opened?: (s: Session) => void; closed?: (s: Session) => void } = {},
): Promise<Outputs> {
  let s: Session | undefined;
  try {
    s = await openSession(sdk, transport, p.compute);
    trace(`party ${transport.party}`, 'session opened');
    options.opened?.(s);
    const run = {
      inputs,
      owners: p.job.owners,
      protocol: p.protocol,
      ...p.roles,
      ...(options.signal ? { signal: options.signal } : {}),
    } as RunOptions;
    const outputs = await s.run(p.job.target, run);
    trace(`party ${transport.party}`, 'run done');
    await s.close();
    trace(`party ${transport.party}`, 'session closed');
    options.closed?.(s);
    return outputs;
  } catch (error) {
    // Not close(): that would end the transport gracefully, before the caller can say why.
    try {
      s?.free();
    } catch {
      // A session still busy is ended by its transport's closing.
    }
    throw error;
  }
}

/**
 * Runs `f` for every party at once. The first failure closes every transport (so no party waits
 * forever on one that gave up) and is what this rejects with, once all have settled.
 */
export async function runAll<T>(transports: readonly Transport[], f: (t: Transport, party: number) => Promise<T>): Promise<T[]> {
  let first: { error: unknown } | undefined;
  const runs = transports.map((t, party) =>
    f(t, party).catch(async (error: unknown) => {
      first ??= { error };
      await Promise.all(transports.map((u) => u.close().catch(() => {})));
      throw error;
    }),
  );
  const settled = await Promise.allSettled(runs);
  if (first) throw first.error;
  return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
}
