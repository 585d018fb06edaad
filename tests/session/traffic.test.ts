// Rounds and bytes per phase, as the session counts them (`Session.traffic`, `ts/traffic.ts`).
// A round is a maximal run of sends to a peer, or of receives from it, in the order the protocol
// asks for them: for two parties in lockstep that is the critical path in one-way flights.
import { beforeAll, describe, expect, it } from 'vitest';
import { init, type Computable, type Session, type Traffic } from '../../dist/index.js';
import { CircuitBuilder } from '../../dist/circuit/index.js';
import { protocols } from '../../dist/protocols/index.js';
import type { ProgramJob, ProtocolContext, ProtocolModule } from '../../dist/protocols/types.js';
import { referenceCircuit } from '../helpers.js';
import { be, group } from './helpers.js';

interface PingTypes {
  readonly computes: 'program';
  readonly roleOptions: { exchanges?: number; symmetric?: boolean };
  readonly roles: { readonly exchanges: number; readonly symmetric: boolean };
  readonly preprocessOptions: Record<string, never>;
  readonly preprocessParams: Record<string, never>;
  readonly state: undefined;
}

const MESSAGE = 100;

/**
 * `exchanges` times: party 0 sends 100 bytes and waits for party 1's answer (lockstep: 2 flights
 * each), or (symmetric) both send and then receive (1 flight each, counted as 2 runs).
 */
const ping: ProtocolModule<PingTypes> = {
  name: 'test-ping',
  version: 1,
  security: 'none',
  protects: 'Nothing: a test protocol that bounces messages, to count rounds.',
  computes: 'program',
  parties: { min: 2, max: 2 },
  roleOptions: ['exchanges', 'symmetric'],
  roles: (options) => ({ exchanges: options.exchanges ?? 1, symmetric: options.symmetric ?? false }),
  async run(ctx: ProtocolContext<undefined>, job: ProgramJob<PingTypes['roles']>) {
    const peer = 1 - ctx.party;
    ctx.progress('ping', 0, job.roles.exchanges);
    for (let i = 0; i < job.roles.exchanges; i++) {
      const m = new Uint8Array(MESSAGE).fill(i);
      if (job.roles.symmetric) {
        await ctx.transport.send(peer, m);
        await ctx.transport.recv(peer);
      } else if (ctx.party === 0) {
        await ctx.transport.send(peer, m);
        await ctx.transport.recv(peer);
      } else {
        await ctx.transport.recv(peer);
        await ctx.transport.send(peer, m);
      }
    }
    ctx.progress('done', 0, 1);
    // One closing message from party 0, in its own phase: one more flight (from party 1 it would
    // continue party 1's last flight).
    if (ctx.party === 0) await ctx.transport.send(peer, Uint8Array.of(1));
    else await ctx.transport.recv(peer);
    return [];
  },
};
(protocols as Record<string, unknown>)['test-ping'] = ping;

const NOTHING = { kind: 'program' as const, hash: new Uint8Array(32).fill(7), owners: [], outputs: [], checkInput: () => undefined };

beforeAll(async () => {
  await init();
});

async function pingRun(sessions: Session[], roles: { exchanges: number; symmetric?: boolean }): Promise<Traffic[]> {
  await Promise.all(sessions.map((s) => s.run(NOTHING as never, { protocol: 'test-ping', inputs: [], ...roles } as never)));
  return sessions.map((s) => s.lastTraffic);
}

describe('rounds and bytes of a ping-pong protocol', () => {
  it('counts exactly the flights of a lockstep exchange, per phase, and every byte both ways', async () => {
    const g = await group(2);
    try {
      for (const exchanges of [1, 5]) {
        const [t0, t1] = await pingRun(g.sessions, { exchanges });
        // The critical path: the agreement (both parties send, then receive: 1 flight), 2 flights
        // per exchange, 1 for the closing message.
        const critical = 1 + 2 * exchanges + 1;
        for (const t of [t0!, t1!]) {
          // Agreement: each party sends its record and then reads the other's: 2 runs (a
          // symmetric exchange: the count's one overestimate here).
          expect(t.phases.agreement?.rounds).toBe(2);
          expect(t.phases.done?.rounds).toBe(1);
          expect(t.phases.run).toBeUndefined(); // the module named its phase before sending
          expect(t.total.instanceRounds).toBe(0);
        }
        // Party 0 opens each exchange: send, receive (2 runs each).
        expect(t0!.phases.ping?.rounds).toBe(2 * exchanges);
        expect(t0!.total.rounds).toBe(critical + 1);
        // Party 1's first receive continues the receiving run of the agreement: 1 fewer, and its
        // total is the critical path exactly.
        expect(t1!.phases.ping?.rounds).toBe(2 * exchanges - 1);
        expect(t1!.total.rounds).toBe(critical);
        expect(t0!.phases.ping).toMatchObject({ bytesSent: MESSAGE * exchanges, bytesReceived: MESSAGE * exchanges, messagesSent: exchanges });
        expect(t1!.phases.done).toMatchObject({ bytesSent: 0, bytesReceived: 1, messagesReceived: 1 });
        expect(t0!.phases.done).toMatchObject({ bytesSent: 1, messagesSent: 1, bytesReceived: 0 });
        // What one party sent is what the other received, phase by phase.
        for (const phase of ['agreement', 'ping', 'done']) expect(t0!.phases[phase]!.bytesSent).toBe(t1!.phases[phase]!.bytesReceived);
      }
      // The session's totals hold both runs, the session-id exchange first; bytesSent omits that.
      const whole = g.sessions[0]!.traffic;
      expect(whole.phases['session-id']).toMatchObject({ rounds: 2, bytesSent: 32, bytesReceived: 32 });
      expect(whole.phases.ping!.rounds).toBe(2 * 1 + 2 * 5);
      expect(whole.total.bytesSent - whole.phases['session-id']!.bytesSent).toBe(g.sessions[0]!.bytesSent);
    } finally {
      await g.close();
    }
  });

  it('counts a symmetric exchange (both send, then both receive) as 2 runs a step: an upper bound', async () => {
    const g = await group(2);
    try {
      const ts = await pingRun(g.sessions, { exchanges: 4, symmetric: true });
      for (const t of ts) expect(t.phases.ping!.rounds).toBe(8);
    } finally {
      await g.close();
    }
  });
});

const sumRounds = (t: Traffic) => t.total.rounds;

/** One yao2pc run of `circuit` in a fresh pair of sessions: each party's traffic of the run. */
async function yaoRun(circuit: Computable, inputs: (p: number) => Uint8Array[]): Promise<Traffic[]> {
  const g = await group(2);
  try {
    await Promise.all(g.sessions.map((s, p) => s.run(circuit, { protocol: 'yao2pc', inputs: inputs(p) })));
    return g.sessions.map((s) => s.lastTraffic);
  } finally {
    await g.close();
  }
}

describe('yao2pc rounds', () => {
  it('are a small constant, the same for a small and a large circuit; bytes grow with the circuit', async () => {
    // The same inputs (two 64-bit values) through 1 and through 64 chained adders.
    const circuit = (adders: number) => {
      const b = new CircuitBuilder();
      const x = b.input(0, 64);
      const y = b.input(1, 64);
      let z = x.add(y);
      for (let i = 1; i < adders; i++) z = z.add(y);
      b.output(z);
      return b.build();
    };
    const inputs = (p: number) => [be(p + 3, 8)];
    const small = await yaoRun(circuit(1), inputs);
    const large = await yaoRun(circuit(64), inputs);
    console.log(JSON.stringify({ small, large }));
    for (const p of [0, 1]) {
      expect(sumRounds(large[p]!)).toBe(sumRounds(small[p]!));
      expect(sumRounds(large[p]!)).toBeLessThanOrEqual(12);
    }
    // The garbler sends two 16-byte ciphertexts per AND gate (half-gates): 63 more adders of 63
    // AND gates each, at least that many more bytes; the evaluator receives them.
    const grown = 63 * 63 * 32;
    expect(large[0]!.total.bytesSent - small[0]!.total.bytesSent).toBeGreaterThanOrEqual(grown);
    expect(large[1]!.total.bytesReceived - small[1]!.total.bytesReceived).toBeGreaterThanOrEqual(grown);
  }, 120_000);
});

describe('authgc rounds', () => {
  it('AES-128 between two parties stays within the flights its code has', async () => {
    const AES = referenceCircuit('aes_128.txt');
    const g = await group(2);
    try {
      const inputs = (p: number) => [new Uint8Array(16).fill(p)];
      await Promise.all(g.sessions.map((s, p) => s.run(AES, { protocol: 'authgc', inputs: inputs(p) })));
      const ts = g.sessions.map((s) => s.lastTraffic);
      console.log(JSON.stringify(ts));
    } finally {
      await g.close();
    }
  }, 120_000);
});
