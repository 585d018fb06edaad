// authgc through the session API: the registry entry and what it says it protects against,
// private outputs, function-independent preprocessing ahead of the inputs (and its agreement),
// an n-bidder Vickrey auction built with the TS circuit builder, eight parties with any party
// evaluating, progress under the paper's phase names, argument checks before any traffic, and
// cancellation through an AbortSignal.
import { beforeAll, describe, expect, it } from 'vitest';
import { init, ProtocolAbort, TransportError, WebmpcError, type Progress } from '../../dist/index.js';
import { CircuitBuilder } from '../../dist/circuit/index.js';
import { protocols } from '../../dist/protocols/index.js';
import { referenceCircuit } from '../helpers.js';
import { rejection } from '../session/helpers.js';
import { bytes, Counting, expected, group, hex, mine, reference, unhex } from './helpers.js';

const AES = referenceCircuit('aes_128.txt');
const KEY = unhex('000102030405060708090a0b0c0d0e0f');
const PT = unhex('00112233445566778899aabbccddeeff');
const CT = '69c4e0d86a7b0430d8cdb78070b4c55a';

beforeAll(async () => {
  await init();
});

/** `n`-bit big-endian bytes of `v`. */
function be(v: number | bigint, bytesLong: number): Uint8Array {
  const out = new Uint8Array(bytesLong);
  let x = BigInt(v);
  for (let i = bytesLong - 1; i >= 0; i--) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}

describe('authgc in the protocol registry', () => {
  it('is malicious-secure with abort, for 2 to 32 parties, and says that aborts need not be unanimous', () => {
    const m = protocols.authgc;
    expect(m).toMatchObject({ name: 'authgc', security: 'malicious (abort)', computes: 'circuit', parties: { min: 2, max: 32 } });
    expect(m.roleOptions).toEqual(['evaluator', 'rho', 'clients']);
    expect(m.protects).toMatch(/n − 1/);
    expect(m.protects).toMatch(/need not be unanimous/);
    expect(m.preprocess?.options).toEqual(expect.arrayContaining(['andGates', 'masks', 'circuit', 'runs']));
  });
});

describe('authgc outputs', () => {
  it('private outputs reach exactly their recipients; the others get undefined', async () => {
    const b = new CircuitBuilder();
    const x = b.input(0, 32);
    const y = b.input(1, 32);
    const z = b.input(2, 32);
    b.output(x.add(y)); // to party 1 only
    b.output(y.mul(z)); // to parties 0 and 2
    b.output(x.gt(z).toUInt()); // to everyone
    const c = b.build();
    const values = [be(0xdeadbeef, 4), be(0x12345678, 4), be(0x0badcafe, 4)];
    const want = expected(reference(c.toBinary()), values).map(hex);
    const g = await group(3);
    try {
      for (const evaluator of [0, 1, 2]) {
        const outs = await Promise.all(
          g.sessions.map((s, p) => s.run(c, { protocol: 'authgc', evaluator, outputs: [[1], [0, 2], [0, 1, 2]], inputs: [values[p]!] })),
        );
        expect(outs.map((o) => o.map(hex)), `evaluator ${evaluator}`).toEqual([
          [undefined, want[1], want[2]],
          [want[0], undefined, want[2]],
          [undefined, want[1], want[2]],
        ]);
      }
    } finally {
      await g.close();
    }
  }, 120_000);
});

describe('authgc preprocessing ahead of the inputs', () => {
  it('preprocess({ circuit, runs }) before any input exists; the runs after it send far less and skip F_Pre', async () => {
    const n = 3;
    const owners = [0, 1];
    const inputs = (p: number) => (p === 0 ? [KEY] : p === 1 ? [PT] : []);
    // Without preprocessing: what one run sends.
    const cold = await group(n);
    const coldBytes: number[] = [];
    try {
      const outs = await Promise.all(
        cold.sessions.map((s, p) =>
          s.run(AES, { protocol: 'authgc', owners, inputs: inputs(p), onProgress: (e: Progress) => void (coldBytes[p] = e.bytesSent) }),
        ),
      );
      expect(outs.map((o) => hex(o[0]))).toEqual([CT, CT, CT]);
    } finally {
      await cold.close();
    }
    // Preprocessed for two runs, before the inputs are known.
    const g = await group(n);
    try {
      const phases: string[] = [];
      await Promise.all(
        g.sessions.map((s, p) =>
          s.preprocess('authgc', { circuit: AES, runs: 2, onProgress: (e: Progress) => void (p === 0 && phases.push(e.phase)) }),
        ),
      );
      expect(new Set(phases)).toEqual(new Set(['setup', 'function-independent preprocessing']));
      for (let run = 0; run < 2; run++) {
        const sent: number[] = [];
        const seen: string[] = [];
        const outs = await Promise.all(
          g.sessions.map((s, p) =>
            s.run(AES, {
              protocol: 'authgc',
              owners,
              inputs: inputs(p),
              onProgress: (e: Progress) => {
                sent[p] = e.bytesSent;
                if (p === 2) seen.push(e.phase);
              },
            }),
          ),
        );
        expect(outs.map((o) => hex(o[0]))).toEqual([CT, CT, CT]);
        expect(seen).not.toContain('setup');
        expect(seen).toContain('function-dependent preprocessing');
        expect(seen).toContain('online');
        // The run uses pooled triples and masks: no F_Pre traffic (most of a cold run's bytes).
        for (let p = 0; p < n; p++) expect(sent[p], `run ${run}, party ${p}`).toBeLessThan(coldBytes[p]! / 3);
      }
    } finally {
      await g.close();
    }
  }, 180_000);

  it('explicit sizes work too, and parties asking for different sizes get PARAMETER_MISMATCH before any F_Pre message', async () => {
    const g = await group(2);
    try {
      const [r0, r1] = await Promise.all([
        rejection(g.sessions[0]!.preprocess('authgc', { andGates: 100, masks: 300 })),
        rejection(g.sessions[1]!.preprocess('authgc', { andGates: 100, masks: 301 })),
      ]);
      for (const r of [r0, r1]) {
        expect(r.error).toBeInstanceOf(ProtocolAbort);
        expect(r.error.code).toBe('PARAMETER_MISMATCH');
        expect(r.error.message).toMatch(/params/);
      }
      // The session is still usable (a mismatch is every party's own verdict).
      await Promise.all(g.sessions.map((s) => s.preprocess('authgc', { andGates: 6400, masks: 6656 })));
      const outs = await Promise.all(g.sessions.map((s, p) => s.run(AES, { protocol: 'authgc', inputs: [p === 0 ? KEY : PT] })));
      expect(outs.map((o) => hex(o[0]))).toEqual([CT, CT]);
    } finally {
      await g.close();
    }
  }, 120_000);

  it('bad preprocessing options are INVALID_ARGUMENT before anything is sent', async () => {
    const g = await group(2);
    try {
      const s = g.sessions[0]!;
      for (const [options, message] of [
        [{ andGates: -1 }, /andGates/],
        [{ andGates: 1.5 }, /andGates/],
        [{ circuit: AES, andGates: 5 }, /either circuit/],
        [{ runs: 2 }, /runs applies only with circuit/],
        [{ circuit: AES, runs: 0 }, /runs must be/],
        [{ rho: 39 }, /rho/],
        [{ garbler: 1 }, /does not apply/],
      ] as const) {
        const err = await s.preprocess('authgc', options as never).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err, JSON.stringify(Object.keys(options))).toBeInstanceOf(WebmpcError);
        expect((err as WebmpcError).code).toBe('INVALID_ARGUMENT');
        expect((err as WebmpcError).message).toMatch(message);
        expect(s.bytesSent).toBe(0); // nothing went on the network
      }
    } finally {
      await g.close();
    }
  });
});

/**
 * A sealed-bid second-price auction among `bidders` bidders and a seller (the last party): the
 * seller learns the winner's index and the price (the second-highest bid); each bidder learns
 * only the winner's index.
 */
function vickrey(bidders: number, width: number) {
  const b = new CircuitBuilder();
  const bids = Array.from({ length: bidders }, (_, i) => b.input(i, width));
  const indexBits = Math.max(1, Math.ceil(Math.log2(bidders)));
  let best = bids[0]!;
  let second = b.constant(0, width);
  let winner = b.constant(0, indexBits);
  for (let i = 1; i < bidders; i++) {
    const aboveBest = bids[i]!.gt(best);
    const aboveSecond = bids[i]!.gt(second);
    const runnerUp = b.mux(aboveSecond, bids[i]!, second);
    second = b.mux(aboveBest, best, runnerUp);
    best = b.mux(aboveBest, bids[i]!, best);
    winner = b.mux(aboveBest, b.constant(i, indexBits), winner);
  }
  b.output(winner);
  b.output(second);
  return b.build();
}

describe('authgc: an n-bidder Vickrey auction built with the circuit builder', () => {
  it.each([
    [3, [17, 250, 249]],
    [4, [100, 100, 7, 99]],
    [5, [3, 60000, 12, 60001, 59999]],
  ])('%i bidders and a seller: everyone learns the winner, only the seller the price', async (bidders, bids) => {
    const n = bidders + 1;
    const c = vickrey(bidders, 16);
    let winner = 0;
    bids.forEach((x, i) => (winner = x > bids[winner]! ? i : winner));
    const price = Math.max(0, ...bids.filter((_, i) => i !== winner));
    const everyone = [...Array(n).keys()];
    const g = await group(n);
    try {
      // The seller evaluates; the bids are the bidders' inputs (declared by the builder).
      const outs = await Promise.all(
        g.sessions.map((s, p) =>
          s.run(c, { protocol: 'authgc', evaluator: bidders, outputs: [everyone, [bidders]], inputs: p < bidders ? [be(bids[p]!, 2)] : [] }),
        ),
      );
      for (const [p, out] of outs.entries()) {
        expect(Number(BigInt(`0x${hex(out[0])}`)), `party ${p}`).toBe(winner);
        expect(out[1] === undefined ? undefined : Number(BigInt(`0x${hex(out[1])}`)), `party ${p}`).toBe(p === bidders ? price : undefined);
      }
    } finally {
      await g.close();
    }
  }, 120_000);
});

describe('authgc with eight parties', () => {
  it('any party evaluates; progress names the setup and the three protocol phases', async () => {
    const n = 8;
    const b = new CircuitBuilder();
    const xs = Array.from({ length: n }, (_, p) => b.input(p, 16));
    b.output(xs.reduce((acc, x) => acc.add(x)));
    const c = b.build();
    const values = Array.from({ length: n }, (_, p) => bytes(2, p));
    const want = expected(reference(c.toBinary()), values).map(hex);
    const g = await group(n);
    try {
      for (const evaluator of [7, 3]) {
        const phases = new Set<string>();
        const outs = await Promise.all(
          g.sessions.map((s, p) =>
            s.run(c, { protocol: 'authgc', evaluator, inputs: [values[p]!], onProgress: (e: Progress) => void (p === 5 && phases.add(e.phase)) }),
          ),
        );
        expect(outs.map((o) => o.map(hex))).toEqual(Array.from({ length: n }, () => want));
        const expectedPhases = ['function-independent preprocessing', 'function-dependent preprocessing', 'online'];
        expect([...phases]).toEqual(evaluator === 7 ? ['setup', ...expectedPhases] : expectedPhases);
      }
    } finally {
      await g.close();
    }
  }, 180_000);
});

describe('authgc arguments and cancellation', () => {
  it('a bad evaluator or rho is INVALID_ARGUMENT before anything is sent', async () => {
    const g = await group(3);
    try {
      const s = g.sessions[1]!;
      for (const [roles, message] of [
        [{ evaluator: 3 }, /evaluator must be a party index in \[0, 3\)/],
        [{ evaluator: -1 }, /evaluator/],
        [{ rho: 200 }, /rho/],
        [{ garbler: 0 }, /does not apply to run with protocol 'authgc'/],
      ] as const) {
        const err = await s.run(AES, { protocol: 'authgc', owners: [0, 1], inputs: [PT], ...(roles as object) }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect((err as WebmpcError).code, JSON.stringify(roles)).toBe('INVALID_ARGUMENT');
        expect((err as WebmpcError).message).toMatch(message);
      }
      expect(s.bytesSent).toBe(0); // nothing went on the network
    } finally {
      await g.close();
    }
  });

  it('parties that disagree on the evaluator get PARAMETER_MISMATCH naming the roles', async () => {
    const g = await group(2);
    try {
      const [r0, r1] = await Promise.all([
        rejection(g.sessions[0]!.run(AES, { protocol: 'authgc', evaluator: 0, inputs: [KEY] })),
        rejection(g.sessions[1]!.run(AES, { protocol: 'authgc', evaluator: 1, inputs: [PT] })),
      ]);
      for (const r of [r0, r1]) {
        expect(r.error.code).toBe('PARAMETER_MISMATCH');
        expect(r.error.message).toMatch(/roles/);
      }
    } finally {
      await g.close();
    }
  }, 60_000);

  it('an AbortSignal fired during preprocessing: ABORTED here, the peers reject at once with the reason', async () => {
    const g = await group(3, { wrap: (t) => new Counting(t) });
    try {
      const controller = new AbortController();
      const runs = g.sessions.map((s, p) =>
        s.preprocess('authgc', {
          andGates: 200_000,
          masks: 200_000,
          ...(p === 1
            ? {
                signal: controller.signal,
                onProgress: (e: Progress) => {
                  if (e.phase === 'function-independent preprocessing') controller.abort();
                },
              }
            : {}),
        }),
      );
      const results = await Promise.all(runs.map(rejection));
      const at = Math.min(...results.map((r) => r.at));
      expect(results[1]!.error).toBeInstanceOf(TransportError);
      expect(results[1]!.error.code).toBe('ABORTED');
      for (const p of [0, 2]) {
        const e = results[p]!.error;
        expect(e).toBeInstanceOf(TransportError);
        expect(e.code, `party ${p}: ${e.message}`).toBe('PEER_DISCONNECTED');
        expect(results[p]!.at - at).toBeLessThan(2000);
      }
      // Far less than 200,000 triples' and masks' worth of traffic (over a hundred MB from this
      // party) was sent: they stopped early. The unit of stopping is one OT-extension window per
      // peer (kos::DUPLEX_WINDOW_OTS = 2^19 OTs, 8 MiB of matrix each way), which may already be on
      // the wire when the abort comes: at most one window to each of the two peers, and setup.
      expect((g.transports[0] as Counting).bytes).toBeLessThan(24 << 20);
    } finally {
      await g.close();
    }
  }, 60_000);
});
