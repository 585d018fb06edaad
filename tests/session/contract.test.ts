// The protocol-module contract, exercised by a protocol that exists only in this test: it is
// added to the registry and nothing else changes, as a real one (mascot, authgc) would be. It
// computes on programs, takes a role option and preprocessing options, keeps state across runs,
// and sees the derived session id, the counted transport and progress. (Vitest gives each test
// file its own module graph, so the registry of other files is untouched.)
import { beforeAll, describe, expect, it } from 'vitest';
import { init, ProtocolAbort, type ProgramSource, type Session } from '../../dist/index.js';
import { protocols } from '../../dist/protocols/index.js';
import type { ProgramJob, ProtocolContext, ProtocolModule } from '../../dist/protocols/types.js';
import { be, group, hex, rejection } from './helpers.js';

interface SumTypes {
  readonly computes: 'program';
  readonly roleOptions: { leader?: number };
  readonly roles: { readonly leader: number };
  readonly preprocessOptions: { tickets?: number };
  readonly preprocessParams: { readonly tickets: number };
  readonly state: { tickets: number; freed: boolean };
}

const seen: { sessionIds: string[]; freed: number } = { sessionIds: [], freed: 0 };

/** Everyone sends its 1-byte inputs to the leader, who sums them and sends the sum back. */
const sum: ProtocolModule<SumTypes> = {
  name: 'test-sum',
  version: 3,
  security: 'none',
  protects: 'Nothing: a test protocol that sends every input to one party, to exercise the contract.',
  computes: 'program',
  parties: { min: 2, max: 5 },
  roleOptions: ['leader'],
  roles: (options, env) => {
    const leader = options.leader ?? 0;
    if (!(Number.isInteger(leader) && leader >= 0 && leader < env.parties)) throw new Error('leader must be a party');
    return { leader };
  },
  async run(ctx: ProtocolContext<SumTypes['state']>, job: ProgramJob<{ readonly leader: number }>) {
    seen.sessionIds.push(hex(ctx.sessionId)!);
    const state = ctx.state;
    if (!state || state.tickets === 0) throw new Error('no tickets left: preprocess first');
    state.tickets--;
    const { leader } = job.roles;
    const mine = job.inputs.reduce((s, v) => s + v[0]!, 0);
    let total: number;
    if (ctx.party === leader) {
      total = mine;
      for (let p = 0; p < ctx.parties; p++) if (p !== leader) total += (await ctx.transport.recv(p))[0]!;
      await Promise.all([...Array(ctx.parties).keys()].filter((p) => p !== leader).map((p) => ctx.transport.send(p, Uint8Array.of(total))));
    } else {
      await ctx.transport.send(leader, Uint8Array.of(mine));
      total = (await ctx.transport.recv(leader))[0]!;
    }
    ctx.progress('evaluating', 1, 1);
    return job.outputs.map((to) => (to.includes(ctx.party) ? Uint8Array.of(total & 0xff) : undefined));
  },
  preprocess: {
    options: ['tickets'],
    params: (options) => ({ tickets: options.tickets ?? 1 }),
    async run(ctx, params) {
      ctx.progress('preprocessing', 0, params.tickets);
      const state = (ctx.state ??= { tickets: 0, freed: false });
      state.tickets += params.tickets;
      ctx.progress('preprocessing', params.tickets, params.tickets);
    },
  },
  free(state) {
    state.freed = true;
    seen.freed++;
  },
};

/** A program: inputs of one byte each, owned as given, one output to `to`. */
function program(owners: number[], to: number[], tag = 1): ProgramSource {
  return {
    kind: 'program',
    hash: new Uint8Array(32).fill(tag),
    owners,
    outputs: [to],
    checkInput: (_i, v) => (v.length === 1 ? undefined : `must be 1 byte, not ${v.length}`),
  };
}

// The one line a new protocol adds to the registry.
(protocols as Record<string, unknown>)['test-sum'] = sum;
const P = 'test-sum' as never;

const runAll = (sessions: Session[], prog: ProgramSource, inputs: number[][], extra: (p: number) => object = () => ({})) =>
  Promise.all(sessions.map((s, p) => s.run(prog, { protocol: P, inputs: inputs[p]!.map((v) => be(v, 1)), ...extra(p) } as never)));

beforeAll(async () => {
  await init();
});

describe('a protocol added by registering its module only', () => {
  it('runs a program among three parties after preprocessing, keeping its state across runs', async () => {
    const g = await group(3);
    const prog = program([0, 1, 2, 2], [0, 1, 2]);
    await Promise.all(g.sessions.map((s) => s.preprocess(P, { tickets: 2 } as never)));
    const out1 = await runAll(g.sessions, prog, [[1], [2], [3, 4]]);
    expect(out1.map((o) => hex(o[0]))).toEqual(['0a', '0a', '0a']);
    const out2 = await runAll(g.sessions, prog, [[5], [6], [7, 8]], () => ({ leader: 2 }));
    expect(out2.map((o) => hex(o[0]))).toEqual(['1a', '1a', '1a']);
    // The derived session id: the same at every party, not the session's own.
    expect(new Set(seen.sessionIds).size).toBe(1);
    expect(seen.sessionIds[0]).not.toBe(hex(g.sessions[0]!.sessionId));
    // Tickets used up at every party: the module's own error rejects each run (and closes its transport).
    const results = await Promise.all(g.sessions.map((s, p) => rejection(s.run(prog, { protocol: P, inputs: [[1], [2], [3, 4]][p]!.map((v) => be(v, 1)) } as never))));
    expect(results[0]!.error.message).toMatch(/no tickets left/);
    // close() frees every protocol's state through the module.
    await Promise.all(g.sessions.map((s) => s.close()));
    expect(seen.freed).toBe(3);
  });

  it('agreement covers its roles and the program; argument checks use what the program declares', async () => {
    const g = await group(2);
    const prog = program([0, 1], [0, 1]);
    await Promise.all(g.sessions.map((s) => s.preprocess(P, { tickets: 5 } as never)));
    const [a, b] = g.sessions as [Session, Session];
    // Different leaders: both parties reject, naming the roles.
    const leaders = await Promise.all([
      rejection(a.run(prog, { protocol: P, inputs: [be(1, 1)], leader: 0 } as never)),
      rejection(b.run(prog, { protocol: P, inputs: [be(1, 1)], leader: 1 } as never)),
    ]);
    for (const r of leaders) {
      expect(r.error).toBeInstanceOf(ProtocolAbort);
      expect(r.error.message).toMatch(/disagrees on the roles: \{"leader":[01]\} here/);
    }
    // Different programs: the hash.
    const programs = await Promise.all([
      rejection(a.run(prog, { protocol: P, inputs: [be(1, 1)] } as never)),
      rejection(b.run(program([0, 1], [0, 1], 2), { protocol: P, inputs: [be(1, 1)] } as never)),
    ]);
    for (const r of programs) expect(r.error.message).toMatch(/disagrees on the hash/);
    // In step: a real run.
    const ok = await runAll([a, b], prog, [[40], [2]]);
    expect(ok.map((o) => hex(o[0]))).toEqual(['2a', '2a']);
    // Local checks, each before anything is sent (each ends the session, so one per session).
    const refusals: [unknown, RegExp][] = [
      [{ protocol: P, inputs: [be(1, 2)] }, /program input 0 \(inputs\[0\]\) must be 1 byte, not 2/],
      [{ protocol: P, inputs: [be(1, 1)], owners: [1, 0] }, /owners contradict the program: its input value 0 belongs to party 0, not 1/],
      [{ protocol: P, inputs: [be(1, 1)], outputs: [[1]] }, /outputs contradict the program: output value 0 goes to parties 0, 1/],
      [{ protocol: P, inputs: [be(1, 1)], garbler: 1 }, /option 'garbler' does not apply to run with protocol 'test-sum'/],
    ];
    for (const [options, text] of refusals) {
      const h = await group(2);
      await expect(h.sessions[0]!.run(prog, options as never)).rejects.toThrow(text);
      await h.close();
    }
    const h = await group(2);
    await expect(h.sessions[0]!.run(new Uint8Array(8), { protocol: P, inputs: [] } as never)).rejects.toThrow(/runs programs, not Boolean circuits/);
    await h.close();
    await g.close();
  });
});
