// authgc failures through the SDK: a party that disconnects (its transport closes) or goes silent
// (nothing leaves, nothing closes) in each phase makes every other party reject with a typed
// error within a bound; a garbler whose table messages are tampered with is caught by the
// evaluator as CHEATING_DETECTED naming the phase, the check and — only where the check proves it
// deviated — the peer: a garbler that flips the tag it holds for another garbler gets nobody named.
import { beforeAll, describe, expect, it } from 'vitest';
import { init, ProtocolAbort, TransportError, WebmpcError, type Progress, type Transport } from '../../dist/index.js';
import { CircuitBuilder } from '../../dist/circuit/index.js';
import { rejection } from '../session/helpers.js';
import { bytes, Counting, group, Stalling } from './helpers.js';

beforeAll(async () => {
  await init();
});

/** Three 32-bit inputs (parties 0..2), their product and sum: a few thousand AND gates. */
function circuit() {
  const b = new CircuitBuilder();
  const [x, y, z] = [0, 1, 2].map((p) => b.input(p, 32));
  b.output(x!.mul(y!).mul(z!));
  b.output(x!.add(y!).add(z!));
  return b.build();
}
const values = [0, 1, 2].map((p) => bytes(4, p + 11));

const PHASES = ['setup', 'function-independent preprocessing', 'function-dependent preprocessing', 'online'] as const;

describe('authgc: a party that disconnects in each phase', () => {
  for (const phase of PHASES) {
    it(`closing party 2's transport when it reports ${phase}: parties 0 and 1 reject with a typed error (the close, not a deadline)`, async () => {
      const g = await group(3);
      const c = circuit();
      try {
        let closedAt = 0;
        const runs = g.sessions.map((s, p) =>
          s.run(c, {
            protocol: 'authgc',
            evaluator: 0,
            inputs: [values[p]!],
            ...(p === 2
              ? {
                  onProgress: (e: Progress) => {
                    if (e.phase === phase && !closedAt) {
                      closedAt = Date.now();
                      void g.inner[2]!.close();
                    }
                  },
                }
              : {}),
          }),
        );
        const results = await Promise.all(runs.map(rejection));
        expect(closedAt, `party 2 never reported ${phase}`).toBeGreaterThan(0);
        for (const p of [0, 1]) {
          const e = results[p]!.error;
          expect(e, `party ${p}`).toBeInstanceOf(WebmpcError);
          // Not TIMEOUT: the close itself reached them, not their recv deadline.
          expect(e.code, `party ${p}: ${e.message}`).toMatch(/^(PEER_DISCONNECTED|ABORTED)$/);
        }
      } finally {
        await g.close();
      }
    }, 60_000);
  }

  it('a party that goes silent mid-preprocessing (no close): the others time out with a typed error, not a hang', async () => {
    const timeout = 1_500;
    let stall: Stalling | undefined;
    // Party 2 goes silent after 40 messages: inside F_Pre, after the setup's base OTs.
    const g = await group(3, { recvTimeoutMs: timeout, wrap: (t, p) => (p === 2 ? (stall = new Stalling(t, 40)) : t) });
    const c = circuit();
    try {
      const runs = g.sessions.map((s, p) => s.run(c, { protocol: 'authgc', inputs: [values[p]!] }));
      const results = await Promise.all([0, 1].map((p) => rejection(runs[p]!)));
      expect(stall!.diedAt).toBeDefined();
      for (const [p, r] of results.entries()) {
        expect(r.error, `party ${p}`).toBeInstanceOf(TransportError);
        expect(r.error.code, `party ${p}: ${r.error.message}`).toMatch(/^(TIMEOUT|PEER_DISCONNECTED)$/);
        // Their recv deadline (1.5 s) ended it, not the test's 60 s: the margin is for a loaded
        // machine, where three parties' Wasm share two cores.
        expect(r.at - stall!.diedAt!).toBeLessThan(timeout + 20_000);
      }
      stall!.release();
      await rejection(runs[2]!);
    } finally {
      stall?.release();
      await g.close();
    }
  }, 60_000);
});

/**
 * Garbler 1's transport: once armed, flips bytes
 * throughout every message it sends to the evaluator that is at least `least` bytes long
 * (the garbled tables; the small messages of the other checks pass).
 */
class TableTamper extends Counting {
  armed = false;
  flipped = 0;
  constructor(inner: ConstructorParameters<typeof Counting>[0], readonly evaluator: number, readonly least: number) {
    super(inner);
  }
  protected override edit(to: number, _index: number, data: Uint8Array): Uint8Array {
    if (!this.armed || to !== this.evaluator || data.length < this.least) return data;
    // One byte in every 16-byte block after the first: a single flipped byte may sit in a row the
    // evaluator never decrypts (which row it uses depends on the random masks), and then nothing
    // is wrong to detect.
    const out = data.slice();
    for (let i = 24; i < out.length; i += 16) out[i]! ^= 0x10;
    this.flipped++;
    return out;
  }
}

/**
 * Garbler 2's transport: once armed, flips in its garbled table to the evaluator (party 0) the tag
 * it holds for garbler 1 — block 1 of every row of 3 blocks (n = 3) — and nothing else, so its
 * own rows stay valid under the evaluator's key. The table is the message of 192 bytes per AND
 * gate (4 rows of 3 blocks) plus 4 masked bits per gate.
 */
class TagForAnotherGarbler extends Counting {
  armed = false;
  flipped = 0;
  protected override edit(to: number, _index: number, data: Uint8Array): Uint8Array {
    const ands = Math.round(data.length / 192.5);
    if (!this.armed || to !== 0 || ands === 0 || 192 * ands + Math.ceil(ands / 2) !== data.length) return data;
    const out = data.slice();
    for (let row = 0; row < 4 * ands; row++) out[(row * 3 + 1) * 16]! ^= 1;
    this.flipped++;
    return out;
  }
}

/**
 * Runs the circuit among 3 parties (evaluator 0) with garbler `cheater`'s transport wrapped by
 * `make`, armed once function-independent preprocessing is done: what the garbler sends the
 * evaluator next is its garbled tables. Returns the tamper and every party's rejection.
 */
async function withTamperingGarbler<T extends Counting & { armed: boolean }>(cheater: number, make: (t: Transport) => T) {
  let tamper: T | undefined;
  const g = await group(3, { wrap: (t, p) => (p === cheater ? (tamper = make(t)) : t) });
  const c = circuit();
  try {
    const runs = g.sessions.map((s, p) =>
      s.run(c, {
        protocol: 'authgc',
        evaluator: 0,
        inputs: [values[p]!],
        ...(p === cheater ? {
                onProgress: (e: Progress) => {
                  if (e.phase === 'function-independent preprocessing' && e.done === e.total) tamper!.armed = true;
                },
              } : {}),
      }),
    );
    return { tamper: tamper!, results: await Promise.all(runs.map(rejection)) };
  } finally {
    await g.close();
  }
}

describe('authgc: a cheating garbler detected through the SDK', () => {
  it("flipping bytes throughout garbler 1's table messages: the evaluator gets CHEATING_DETECTED with phase, check and peer 1; no one gets an output", async () => {
    const { tamper, results } = await withTamperingGarbler(1, (t) => new TableTamper(t, 0, 4096));
    expect(tamper.flipped).toBeGreaterThan(0);
    const e = results[0]!.error;
    expect(e, e.message).toBeInstanceOf(ProtocolAbort);
    const abort = e as ProtocolAbort;
    expect(abort.code).toBe('CHEATING_DETECTED');
    // Every row is bent, so the first failure is at the first level of AND gates, whose input
    // labels garbler 1 sent itself: the check proves garbler 1 deviated.
    expect(abort.peer).toBe(1);
    // A flipped table row decrypts to a wrong label/tag: the evaluator's tag check in the online
    // phase catches it.
    expect(abort.phase).toBe('online');
    expect(abort.check).toMatch(/tag check/);
    // The others learn of the abort at once (the evaluator closed its transport), with its cause.
    for (const p of [1, 2]) {
      const e = results[p]!.error;
      expect(e, `party ${p}`).toBeInstanceOf(TransportError);
      expect(e.code).toBe('PEER_DISCONNECTED');
      expect(e.message).toMatch(/CHEATING_DETECTED/);
    }
  }, 60_000);

  it('garbler 2 flipping the tag it holds for garbler 1: the evaluator aborts naming no one (the check cannot tell), never the honest garbler 1', async () => {
    const { tamper, results } = await withTamperingGarbler(2, (t) => new TagForAnotherGarbler(t));
    expect(tamper.flipped).toBe(1);
    // The evaluator's label of garbler 1 after an AND gate is rebuilt partly from the tags
    // garbler 2 holds for it: garbler 1's next row fails the tag check, and that failure cannot
    // tell garbler 1's deviation from garbler 2's. Before the fix: peer 1, an honest party framed.
    const abort = results[0]!.error as ProtocolAbort;
    expect(abort, abort.message).toBeInstanceOf(ProtocolAbort);
    expect(abort).toMatchObject({ code: 'CHEATING_DETECTED', phase: 'online' });
    expect(abort.peer).toBeUndefined();
    expect(abort.check).toMatch(/tag check/);
    expect(abort.message).toMatch(/cannot tell which party/);
    expect(abort.message).not.toMatch(/party \d/);
    // The others learn of the abort from the evaluator: nobody is named there either.
    for (const p of [1, 2]) {
      const e = results[p]!.error;
      expect(e.code, `party ${p}`).toBe('PEER_DISCONNECTED');
      expect(e.message).toMatch(/CHEATING_DETECTED/);
      expect(e.message).not.toMatch(/party 1 failed/);
    }
  }, 60_000);
});
