// Client–server runs with authgc among the servers (serve({ protocol: 'authgc', circuit })):
// client inputs through webmpc_authgc::online::clients. A Vickrey auction among client bidders
// against the plaintext auction; each check of the input protocol with a deviating party.
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from '../../dist/index.js';
import { CircuitBuilder, vickreyClientsCircuit } from '../../dist/circuit/index.js';
import { vickreyReference } from '../../dist/program/index.js';
import { deploy, failure } from './helpers.js';

beforeAll(async () => {
  await init();
});

const BITS = 8;
const input = { type: 'unsigned', bits: BITS } as const;
const circuit = (n: number) => vickreyClientsCircuit({ clients: n, bits: BITS });
const options = (sessionId: string, count: number) => ({ sessionId, protocol: 'authgc' as const, input, circuit, window: { count, closeAfterMs: 30_000 } });

type Served = { outputs: bigint[]; clients: string[]; dropped: { client: string; reason: string }[] };
const served = (r: PromiseSettledResult<unknown>) => {
  expect(r.status, r.status === 'rejected' ? String((r as PromiseRejectedResult).reason) : '').toBe('fulfilled');
  return (r as PromiseFulfilledResult<Served>).value;
};

/** The auction over the bids by slot, with the slots in `without` counted as absent (bid 0). */
function outcome(bySlot: bigint[], without: number[] = []): bigint[] {
  const { winner, price } = vickreyReference(bySlot.map((b, i) => (without.includes(i) ? 0n : b)));
  return [BigInt(winner), price];
}

describe('serve / submit with authgc: results', () => {
  for (const servers of [2, 3]) {
    it(`${servers} servers, a Vickrey auction among 5 client bidders: winner and price as in the clear, at every server and client`, async () => {
      const d = await deploy(servers);
      const bids = [30n, 200n, 150n, 7n, 200n];
      const run = d.serve(options(`vickrey-${servers}`, bids.length));
      const clients = await Promise.all(bids.map((x) => d.submit({ sessionId: `vickrey-${servers}`, input: x })));
      const results = await run;
      const bySlot: bigint[] = [];
      clients.forEach((c, k) => (bySlot[c.index] = bids[k]!));
      const want = outcome(bySlot);
      // A tie at the top: the lower slot of the two 200s wins and pays 200.
      expect(want[1]).toBe(200n);
      for (const c of clients) {
        expect(c.clients).toBe(bids.length);
        expect(c.counted).toBe(bids.length);
        expect(c.outputs).toEqual(want);
      }
      for (const r of results) {
        const v = served(r);
        expect(v.outputs).toEqual(want);
        expect(v.clients).toHaveLength(bids.length);
        expect(v.dropped).toEqual([]);
      }
    });
  }

  it('serve refuses a circuit whose inputs are not client values of the input width (INVALID_ARGUMENT), and a program with authgc', async () => {
    const d = await deploy(2);
    const party = (n: number) => {
      const b = new CircuitBuilder();
      const xs = Array.from({ length: n }, () => b.input(0, BITS + 1));
      b.output(xs[0]!);
      return b.build();
    };
    const wrong = d.serve({ ...options('wrong', 2), circuit: party });
    const clients = Promise.allSettled([d.submit({ sessionId: 'wrong', input: 1n, timeoutMs: 5_000 }), d.submit({ sessionId: 'wrong', input: 2n, timeoutMs: 5_000 })]);
    for (const r of await wrong) {
      expect(r.status).toBe('rejected');
      expect((r as PromiseRejectedResult).reason.code).toBe('INVALID_ARGUMENT');
    }
    await clients;
    const both = await d.serve({ ...options('both', 2), program: () => undefined as never });
    for (const r of both) expect((r as PromiseRejectedResult).reason.code).toBe('INVALID_ARGUMENT');
  });

  it('an out-of-range bid is refused by submit (INVALID_ARGUMENT) before anything of it is sent; fewer than two clients left: nothing is computed', async () => {
    const d = await deploy(2);
    const run = d.serve(options('range', 2));
    const [bad, alone] = await Promise.allSettled([d.submit({ sessionId: 'range', input: 256n }), d.submit({ sessionId: 'range', input: 9n })]);
    expect((bad as PromiseRejectedResult).reason.code).toBe('INVALID_ARGUMENT');
    // Two joined, so the circuit has two slots; the one left still gets the auction's result.
    expect((alone as PromiseFulfilledResult<{ outputs: bigint[] }>).value.outputs).toEqual([BigInt((alone as PromiseFulfilledResult<{ index: number }>).value.index), 0n]);
    for (const r of await run) expect(served(r).dropped).toHaveLength(1);
  });
});

describe('serve / submit with authgc: deviating parties', () => {
  it("a server that changes its shares of a client's masks gets that client refused (CLIENT_REFUSED), never its bid changed; the run goes on without it", async () => {
    for (const [servers, cheater, byte] of [
      [2, 1, 0], // the mask of a bid bit (λ bit 4)
      [3, 2, 5], // a check mask (μ bit 35)
    ] as const) {
      const d = await deploy(servers);
      const bids = [5n, 250n, 7n];
      // Slot 0's client is the target; make it the one whose changed input would win.
      const run = d.serve(options(`bad-mask-${servers}`, 3), (j) =>
        j === cheater ? { _cheat: { masks: (i: number, shares: Uint8Array) => void (i === 0 && (shares[byte]! ^= 0x10)) } } : {},
      );
      const clients = await Promise.allSettled(bids.map((x) => d.submit({ sessionId: `bad-mask-${servers}`, input: x })));
      const results = await run;
      const byIndex = new Map<number, bigint>();
      clients.forEach((c, k) => {
        if (c.status === 'fulfilled') byIndex.set(c.value.index, bids[k]!);
      });
      const refused = clients.filter((c) => c.status === 'rejected') as PromiseRejectedResult[];
      expect(refused).toHaveLength(1);
      expect(refused[0]!.reason.code).toBe('CLIENT_REFUSED');
      expect(refused[0]!.reason.message).toMatch(/check/);
      const bySlot = [0, 1, 2].map((i) => byIndex.get(i) ?? 0n);
      const want = outcome(bySlot, [0]);
      for (const c of clients) if (c.status === 'fulfilled') expect(c.value.outputs).toEqual(want);
      for (const r of results) {
        const v = served(r);
        expect(v.outputs).toEqual(want);
        expect(v.dropped.map((x) => x.reason)).toEqual(['its input check failed (a server changed its masks, or the client its check)']);
      }
    }
  });

  it('a client whose check does not hold (the same message to every server) is refused alone', async () => {
    const d = await deploy(3);
    const run = d.serve(options('bad-view', 3));
    const honest = [d.submit({ sessionId: 'bad-view', input: 1n }), d.submit({ sessionId: 'bad-view', input: 2n })];
    // The message's last byte holds its view of the check: flipped alike for every server.
    const liar = d.submit({ sessionId: 'bad-view', input: 200n, _cheat: { input: (_server, m) => void (m[m.length - 1]! ^= 1) } });
    const err = await failure(liar);
    expect(err.code).toBe('CLIENT_REFUSED');
    const ok = await Promise.all(honest);
    for (const c of ok) expect(c.outputs[1]).toBe(1n); // 200 did not count: the price is the lower honest bid
    for (const r of await run) expect(served(r).dropped).toHaveLength(1);
  });

  it('a client that sends different servers different messages is dropped (CLIENT_REFUSED); the others get the result', async () => {
    const d = await deploy(2);
    const run = d.serve(options('equivocate', 3));
    const honest = [d.submit({ sessionId: 'equivocate', input: 1n }), d.submit({ sessionId: 'equivocate', input: 2n })];
    const liar = d.submit({ sessionId: 'equivocate', input: 4n, _cheat: { input: (server, m) => void (server === 1 && (m[0]! ^= 2)) } });
    expect((await failure(liar)).code).toBe('CLIENT_REFUSED');
    for (const c of await Promise.all(honest)) expect(c.outputs[1]).toBe(1n);
    for (const r of await run) expect(served(r).dropped.map((x) => x.reason)).toEqual(['sent different servers different inputs']);
  });

  it('a client that sends one server an unsigned input, or every server one the run could not decode, is dropped alone: no abort, no server blamed', async () => {
    for (const [name, cheat] of [
      // Another message with a signature that does not verify, to server 1 only: without the
      // check on receipt the servers' digests would differ and the honest server 1 would be
      // named a forger (CHEATING_DETECTED, the run aborted).
      [
        'unsigned',
        {
          input: (server: number, m: Uint8Array) => void (server === 1 && (m[0]! ^= 2)),
          signature: (server: number, sig: Uint8Array) => void (server === 1 && (sig[0]! ^= 1)),
        },
      ],
      // A padding bit of x̂ set (a 9-bit value in 2 bytes), alike for every server and signed.
      ['padding', { input: (_server: number, m: Uint8Array) => void (m[1]! |= 0x80) }],
    ] as const) {
      const d = await deploy(3);
      const run = d.serve(options(`bad-${name}`, 3));
      const honest = [d.submit({ sessionId: `bad-${name}`, input: 1n }), d.submit({ sessionId: `bad-${name}`, input: 2n })];
      const bad = d.submit({ sessionId: `bad-${name}`, input: 200n, _cheat: cheat });
      expect((await failure(bad)).code, name).toBe('CLIENT_REFUSED');
      for (const c of await Promise.all(honest)) {
        expect(c.outputs[1]).toBe(1n);
        expect(c.counted).toBe(2);
      }
      for (const r of await run) expect(served(r).dropped.map((x) => x.reason)).toEqual(['did not send its input to every server in time']);
    }
  });

  it("a server that runs with another message than its client's: the honest servers abort before any output (PARAMETER_MISMATCH)", async () => {
    const d = await deploy(2);
    const run = d.serve(options('change', 2), (j) => (j === 1 ? { _cheat: { inputUsed: (_i: number, m: Uint8Array) => void (m[0]! ^= 2) } } : {}));
    const clients = await Promise.allSettled([d.submit({ sessionId: 'change', input: 1n, timeoutMs: 20_000 }), d.submit({ sessionId: 'change', input: 2n, timeoutMs: 20_000 })]);
    const results = await run;
    expect(results[0]!.status).toBe('rejected');
    expect((results[0] as PromiseRejectedResult).reason.code).toBe('PARAMETER_MISMATCH');
    for (const c of clients) expect(c.status).toBe('rejected');
  });

  it('a client that vanishes after its masks is dropped without stopping the run', async () => {
    const d = await deploy(2);
    const run = d.serve(options('vanish', 3));
    const controller = new AbortController();
    const gone = d.submit({ sessionId: 'vanish', input: 100n, signal: controller.signal, onProgress: (p) => void (p.phase === 'masks' && controller.abort()) });
    const stay = [d.submit({ sessionId: 'vanish', input: 1n }), d.submit({ sessionId: 'vanish', input: 2n })];
    await failure(gone);
    for (const c of await Promise.all(stay)) expect(c.outputs[1]).toBe(1n);
    for (const r of await run) expect(served(r).dropped).toHaveLength(1);
  });
});
