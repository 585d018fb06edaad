// Rounds and bytes per phase, as the session counts them (`Session.traffic`, `ts/traffic.ts`).
// A round is a maximal run of sends to a peer, or of receives from it, in the order the protocol
// asks for them: for two parties in lockstep that is the critical path in one-way flights.
import { beforeAll, describe, expect, it } from 'vitest';
import { createMemoryTransports, init, session, type Computable, type Session, type Traffic } from '../../dist/index.js';
import { CircuitBuilder } from '../../dist/circuit/index.js';
import { protocols } from '../../dist/protocols/index.js';
import type { ProgramJob, ProtocolContext, ProtocolModule } from '../../dist/protocols/types.js';
import { referenceCircuit } from '../helpers.js';
import { be, group } from './helpers.js';

interface PingTypes {
  readonly computes: 'program';
  readonly roleOptions: { exchanges?: number; symmetric?: boolean; burst?: number };
  readonly roles: { readonly exchanges: number; readonly symmetric: boolean; readonly burst: number };
  readonly preprocessOptions: Record<string, never>;
  readonly preprocessParams: Record<string, never>;
  readonly state: undefined;
}

const MESSAGE = 100;

/**
 * `exchanges` times: party 0 sends `burst` messages of 100 bytes and waits for party 1's answer
 * (lockstep: 2 flights each), or (symmetric) both send and then receive (1 flight each, counted
 * as 2 runs).
 */
const ping: ProtocolModule<PingTypes> = {
  name: 'test-ping',
  version: 1,
  security: 'none',
  protects: 'Nothing: a test protocol that bounces messages, to count rounds.',
  computes: 'program',
  parties: { min: 2, max: 2 },
  roleOptions: ['exchanges', 'symmetric', 'burst'],
  roles: (options) => ({ exchanges: options.exchanges ?? 1, symmetric: options.symmetric ?? false, burst: options.burst ?? 1 }),
  async run(ctx: ProtocolContext<undefined>, job: ProgramJob<PingTypes['roles']>) {
    const peer = 1 - ctx.party;
    ctx.progress('ping', 0, job.roles.exchanges);
    for (let i = 0; i < job.roles.exchanges; i++) {
      const m = new Uint8Array(MESSAGE).fill(i);
      if (job.roles.symmetric) {
        await ctx.transport.send(peer, m);
        await ctx.transport.recv(peer);
      } else if (ctx.party === 0) {
        for (let b = 0; b < job.roles.burst; b++) await ctx.transport.send(peer, m);
        await ctx.transport.recv(peer);
      } else {
        for (let b = 0; b < job.roles.burst; b++) await ctx.transport.recv(peer);
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

async function pingRun(sessions: Session[], roles: { exchanges: number; symmetric?: boolean; burst?: number }): Promise<Traffic[]> {
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

  it('counts a burst of messages in one direction as one round', async () => {
    const g = await group(2);
    try {
      const [t0, t1] = await pingRun(g.sessions, { exchanges: 3, burst: 4 });
      expect(t0!.phases.ping).toMatchObject({ rounds: 6, messagesSent: 12, messagesReceived: 3, bytesSent: 1200 });
      expect(t1!.phases.ping).toMatchObject({ rounds: 5, messagesSent: 3, messagesReceived: 12, bytesReceived: 1200 });
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

/**
 * authgc's messages per party for AES-128, n = 2, party 0 evaluating, ρ = 40, one thread (no
 * parallel instances), counted from the code (wasm/crates/authgc, wasm/crates/ot; the flight
 * table is in the fpre module docs). An `exchange` (net.rs: every party sends, then receives) is
 * 2 messages at each party; `open`, a broadcast-log `check` and `agree` are one exchange each,
 * `coin_toss` and `commit_then_open` two; a lockstep KOS chunk (ot/kos.rs `chunk_with`) is 3
 * messages (U, the challenge, the answer). Π_aBit (fpre `abit`) runs both Δ-OT instances of the
 * pair at once, chunks pipelined (ot/kos.rs `cot_duplex`: per window of ≤ 2^19 OTs one message
 * each way with every U, the first led by the coin commitment, then one with every challenge,
 * then one with every answer: 6 messages), then opens the coins and exchanges the check:
 * 6 + 2 + 2 per aBit run of ≤ 2^19 bits.
 *
 *  agreement  the session's parameter check: 1 exchange                                   2
 *  setup      base OTs (ot/base.rs: each side sends once, receives once)                  2
 *             the reverse KOS instance: one KOS chunk of 128 + the 16-byte correction     4 → 6
 *  function-independent: 6400 AND triples in one batch, the run's agreement leading its
 *             first message (no exchange of its own); bucket size 4 at ρ = 40
 *             (fpre_core `bucket_plan`), so aBit of 3·4·6400 bits + the 6656 masks (AND gates + input bits) + padding
 *             (10: the masks ride on the triples' aBit run, fpre `triples_and_shares`), then
 *             HalfAnd (with the X digest that covers the masks too), LeakyE, LeakyCoins (3),
 *             LeakyCheck commit-then-open (2), the bucketing open (1): 6 exchanges (12)       22
 *             the first batch after setup only: Π_aShare's key check on ρ more bits of
 *             that aBit run (fpre `first_key_check`), 3 exchanges, the first carrying the
 *             X digest, before HalfAnd                                                    + 6
 *  function-dependent: F_Pre.AND's open of d and e (2), the garbler's table (1)          3
 *  online     input masks opened to their owners, the run's agreement at the head of
 *             the same message (2), masked inputs (2), the log check (2), labels to the
 *             evaluator (1), the evaluator's outputs (1), output masks opened (2)          10
 *
 * A round begins with a message or not at all, so each phase's rounds are at most its
 * messages: 49 for a fresh session's run, 37 for the next (no setup, no key check). Setup is
 * tighter in runs (see ts/traffic.ts): a sequence of steps has at most the sum of its steps'
 * runs, and the reverse instance's 4 messages are 3 runs at each party (lockstep, the
 * correction follows the answer): 2 + 3 = 5.
 * (Protocol version 2 ran the two Δ-OT directions one after the other, chunk by chunk, 6
 * messages per chunk in lockstep, and spent an exchange on each coin commitment and on setup's
 * X digest: 26 setup and 46 function-independent messages; 76 / 84 rounds at parties 0 / 1 for
 * a fresh session, 22 / 24 in setup, 40 / 44 in the function-independent phase. Version 3 made
 * the masks in a share batch of their own after the triples: aBit (10) and the log check (2),
 * 36 function-independent messages, 75 / 53 in all. Version 4 ended setup with the key check on
 * an aBit run of its own: 22 setup messages, 63 for a fresh session's run. Version 5 sent the
 * online phase's agreement in an exchange of its own: 12 online messages, 53 in all. Version 6
 * sent prepare's agreement in an exchange of its own: 24 function-independent messages, 51 in
 * all.)
 */
const AUTHGC_AES_MESSAGES: { [phase: string]: number } = {
  agreement: 2,
  setup: 6,
  'function-independent preprocessing': 22,
  'function-dependent preprocessing': 3,
  online: 10,
};

/** Tighter upper bounds on some phases' runs (derived above). */
const AUTHGC_AES_RUNS: { [phase: string]: number } = { setup: 5 };

/** Messages the first batch after setup adds: Π_aShare's key check, 3 exchanges. */
const FIRST_BATCH_KEY_CHECK = 6;

describe('authgc rounds', () => {
  it('AES-128 between two parties: each phase within the messages its code sends and receives', async () => {
    const AES = referenceCircuit('aes_128.txt');
    const transports = createMemoryTransports(2, { recvTimeoutMs: 60_000 });
    // One thread: parallel instances (more cores) would split F_Pre over sub-channels.
    const sessions = await Promise.all(transports.map((transport, party) => session({ transport, party, parties: 2, threads: 1 })));
    try {
      const inputs = (p: number) => [new Uint8Array(16).fill(p)];
      for (const first of [true, false]) {
        await Promise.all(sessions.map((s, p) => s.run(AES, { protocol: 'authgc', evaluator: 0, inputs: inputs(p) })));
        for (const s of sessions) {
          const t = s.lastTraffic;
          const expected = Object.fromEntries(
            Object.entries(AUTHGC_AES_MESSAGES)
              .filter(([phase]) => first || phase !== 'setup')
              .map(([phase, m]) => [phase, first && phase === 'function-independent preprocessing' ? m + FIRST_BATCH_KEY_CHECK : m]),
          );
          const messages = Object.fromEntries(Object.entries(t.phases).map(([phase, c]) => [phase, c.messagesSent + c.messagesReceived]));
          expect(messages, `party ${s.party}, ${first ? 'first' : 'second'} run`).toEqual(expected);
          for (const [phase, c] of Object.entries(t.phases)) {
            expect(c.rounds, phase).toBeLessThanOrEqual(Math.min(expected[phase]!, AUTHGC_AES_RUNS[phase] ?? Infinity));
          }
          expect(t.total.rounds).toBeLessThanOrEqual(first ? 49 : 37);
          // Rounds are not messages: the symmetric exchanges and the runs of sends merge some.
          expect(t.total.rounds).toBeGreaterThan(30);
        }
      }
    } finally {
      await Promise.all(sessions.map((s) => s.close()));
    }
  }, 180_000);
});

describe('parallel instances', () => {
  it('count rounds on each sub-channel apart, and every byte of the split transport once', async () => {
    const transports = createMemoryTransports(2, { recvTimeoutMs: 60_000 });
    const sessions = await Promise.all(transports.map((transport, party) => session({ transport, party, parties: 2, threads: 2 })));
    try {
      const sent = sessions.map((s) => s.bytesSent);
      // 8000 AND gates: split in two parts of 4000 (the same bucket size as the whole).
      await Promise.all(sessions.map((s) => s.preprocess('authgc', { andGates: 8000 })));
      const [t0, t1] = sessions.map((s) => s.lastTraffic) as [Traffic, Traffic];
      for (const [p, t] of [t0, t1].entries()) {
        // The primary and one instance each ran a share of F_Pre over their own sub-channel.
        expect(t.total.instanceRounds, `party ${p}`).toBeGreaterThan(10);
        expect(t.total.rounds, `party ${p}`).toBeGreaterThan(10);
        // Every byte once: the phases add up to what went through the transport (tags and
        // credit messages of the sub-channels included).
        expect(t.total.bytesSent).toBe(sessions[p]!.bytesSent - sent[p]!);
      }
      expect(t0.total.bytesSent).toBe(t1.total.bytesReceived);
      expect(t1.total.bytesSent).toBe(t0.total.bytesReceived);
    } finally {
      await Promise.all(sessions.map((s) => s.close()));
    }
  }, 180_000);
});
