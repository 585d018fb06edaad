// Client–server MPC (serve / submit): compute parties run MASCOT on inputs clients secret-share
// to them. Results against BigInt; each check of the input protocol with a deviating party.
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from '../../dist/index.js';
import { ProgramBuilder, vickreyAuction, vickreyReference } from '../../dist/program/index.js';
import { deploy, failure } from './helpers.js';

beforeAll(async () => {
  await init();
});

const BITS = 8;
const input = { type: 'unsigned', bits: BITS } as const;

/** Σ x_i and Σ x_i·x_(i+1) over the clients' inputs (a product, so the run uses triples). */
function sums(servers: number) {
  return (n: number) => {
    const b = new ProgramBuilder({ parties: servers });
    const xs = Array.from({ length: n }, () => b.uint('client', BITS));
    let sum = b.constant(0);
    let products = b.constant(0);
    xs.forEach((x, i) => {
      sum = sum.add(x);
      if (i + 1 < xs.length) products = products.add(x.mul(xs[i + 1]!));
    });
    b.output(sum);
    b.output(products);
    return b.build();
  };
}

/**
 * The honest servers all abort; each either caught `culprit` itself (`code`, naming it) or first
 * heard another honest server's abort over it (PEER_DISCONNECTED carrying that cause: fail-stop,
 * and which comes first is the machine's timing). The first to notice can only have caught it
 * itself, so one at least did.
 */
function caughtByOneAtLeast(results: PromiseSettledResult<unknown>[], code: string, culprit: number): void {
  type Reason = { code?: string; peer?: number; message?: string; remote?: { code?: string; message?: string } };
  const direct = (e: Reason) => e.code === code && e.peer === culprit;
  const told = (e: Reason) => e.code === 'PEER_DISCONNECTED' && `${e.remote?.code}: ${e.remote?.message}`.includes(code);
  const reasons = results.map((r) => {
    expect(r.status).toBe('rejected');
    return (r as PromiseRejectedResult).reason as Reason;
  });
  for (const e of reasons) expect(direct(e) || told(e), `${e.code} (peer ${e.peer}): ${e.message}`).toBe(true);
  expect(reasons.some(direct)).toBe(true);
}

function sumsReference(xs: bigint[]): bigint[] {
  let products = 0n;
  for (let i = 0; i + 1 < xs.length; i++) products += xs[i]! * xs[i + 1]!;
  return [xs.reduce((a, b) => a + b, 0n), products];
}

describe('serve / submit: results', () => {
  for (const servers of [2, 3]) {
    it(`${servers} servers, 5 clients: sums and products of the clients' inputs match BigInt, at every server and client`, async () => {
      const d = await deploy(servers);
      const bids = [17n, 0n, 255n, 42n, 99n];
      const run = d.serve({ sessionId: 'sums', input, program: sums(servers), window: { count: bids.length, closeAfterMs: 30_000 } });
      const clients = await Promise.all(bids.map((x) => d.submit({ sessionId: 'sums', input: x })));
      const results = await run;
      // Slots follow the servers' order of client keys, not the order of submission.
      const bySlot: bigint[] = [];
      clients.forEach((c, k) => (bySlot[c.index] = bids[k]!));
      const want = sumsReference(bySlot);
      for (const c of clients) {
        expect(c.clients).toBe(bids.length);
        expect(c.outputs).toEqual(want);
      }
      for (const r of results) {
        expect(r.status).toBe('fulfilled');
        const v = (r as PromiseFulfilledResult<{ outputs: bigint[]; clients: string[]; dropped: unknown[] }>).value;
        expect(v.outputs).toEqual(want);
        expect(v.clients).toHaveLength(bids.length);
        expect(v.dropped).toEqual([]);
      }
    });
  }

  it('3 servers, a Vickrey auction among 4 client bidders: winner and price as in the clear', async () => {
    const d = await deploy(3);
    const bids = [30n, 200n, 150n, 7n];
    const run = d.serve({
      sessionId: 'auction-1',
      input,
      program: (n) => vickreyAuction({ parties: 3, bids: n, bits: BITS, bidders: 'clients' }),
      window: { count: bids.length, closeAfterMs: 30_000 },
    });
    const clients = await Promise.all(bids.map((x) => d.submit({ sessionId: 'auction-1', input: x })));
    await run;
    const bySlot: bigint[] = [];
    clients.forEach((c, k) => (bySlot[c.index] = bids[k]!));
    const { winner, price } = vickreyReference(bySlot);
    for (const c of clients) expect(c.outputs).toEqual([BigInt(winner), price]);
    // The winner is the client that bid 200.
    expect(bySlot[winner]).toBe(200n);
  });
});

describe('serve / submit: deviating parties', () => {
  it('an out-of-range bid is refused by submit (INVALID_ARGUMENT) and never reaches the servers; the run goes on', async () => {
    const d = await deploy(2);
    const run = d.serve({ sessionId: 'range', input, program: sums(2), window: { count: 2, closeAfterMs: 30_000 } });
    const [bad, good] = await Promise.allSettled([d.submit({ sessionId: 'range', input: 256n }), d.submit({ sessionId: 'range', input: 9n })]);
    expect(bad.status).toBe('rejected');
    expect((bad as PromiseRejectedResult).reason.code).toBe('INVALID_ARGUMENT');
    expect((good as PromiseFulfilledResult<{ outputs: bigint[] }>).value.outputs).toEqual([9n, 0n]);
    for (const r of await run) expect((r as PromiseFulfilledResult<{ dropped: unknown[] }>).value.dropped).toHaveLength(1);
  });

  it('a client running modified code that inputs a value out of range (the same to every server) is refused, its input counted as 0; the run goes on', async () => {
    const d = await deploy(3);
    const run = d.serve({ sessionId: 'out-of-range', input, program: sums(3), window: { count: 3, closeAfterMs: 30_000 } });
    // Bid 1 has bit 0 set: shifting ε of that bit makes the shared bit 2 (or 1 − 255), not a bit.
    const cheat = d.submit({ sessionId: 'out-of-range', input: 1n, _cheat: { input: (_server, eps) => void (eps[0] = (eps[0]! + 1) & 0xff) } });
    const honest = [d.submit({ sessionId: 'out-of-range', input: 20n }), d.submit({ sessionId: 'out-of-range', input: 30n })];
    const err = await failure(cheat);
    expect(err.code).toBe('CLIENT_REFUSED');
    expect(err.message).toMatch(/out of range/);
    const ok = await Promise.all(honest);
    // The refused client's slot counts 0: Σ = 50; the product of neighbours depends on the slots.
    for (const c of ok) expect(c.outputs[0]).toBe(50n);
    for (const r of await run) {
      expect(r.status).toBe('fulfilled');
      const v = (r as PromiseFulfilledResult<{ outputs: bigint[]; dropped: { reason: string }[] }>).value;
      expect(v.outputs[0]).toBe(50n);
      expect(v.dropped.map((x) => x.reason)).toEqual(['its input was out of range (counted as 0)']);
    }
  });

  it('a server that sends a client an inconsistent mask share: that client detects it (CHEATING_DETECTED) and is dropped; the run goes on', async () => {
    const d = await deploy(2);
    const bids = [5n, 6n, 7n];
    const run = d.serve(
      { sessionId: 'bad-mask', input, program: sums(2), window: { count: 3, closeAfterMs: 30_000 } },
      (j) => (j === 1 ? { _cheat: { masks: (i: number, shares: Uint8Array) => void (i === 0 && (shares[0]! ^= 1)) } } : {}),
    );
    const clients = await Promise.allSettled(bids.map((x) => d.submit({ sessionId: 'bad-mask', input: x })));
    const results = await run;
    const rejected = clients.filter((c) => c.status === 'rejected') as PromiseRejectedResult[];
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.reason.code).toBe('CHEATING_DETECTED');
    for (const r of results) {
      expect(r.status).toBe('fulfilled');
      const v = (r as PromiseFulfilledResult<{ outputs: bigint[]; dropped: unknown[] }>).value;
      expect(v.dropped).toHaveLength(1);
      expect(v.outputs[0]).toBeLessThan(18n); // the dropped client's bid is not in the sum
    }
  });

  it('a client that sends different servers different masked inputs is dropped (CLIENT_REFUSED); the others get the result', async () => {
    const d = await deploy(2);
    const run = d.serve({ sessionId: 'equivocate', input, program: sums(2), window: { count: 3, closeAfterMs: 30_000 } });
    const honest = [d.submit({ sessionId: 'equivocate', input: 1n }), d.submit({ sessionId: 'equivocate', input: 2n })];
    const liar = d.submit({ sessionId: 'equivocate', input: 4n, _cheat: { input: (server, eps) => void (server === 1 && (eps[0]! ^= 1)) } });
    const err = await failure(liar);
    expect(err.code).toBe('CLIENT_REFUSED');
    const ok = await Promise.all(honest);
    for (const c of ok) expect(c.outputs).toEqual([3n, 2n]);
    for (const r of await run) {
      expect(r.status).toBe('fulfilled');
      expect((r as PromiseFulfilledResult<{ dropped: { reason: string }[] }>).value.dropped.map((x) => x.reason)).toEqual(['sent different servers different inputs']);
    }
  });

  it('a client whose masked values are not canonical field elements (alike for every server, signed) is dropped alone: the run goes on', async () => {
    const d = await deploy(2);
    const run = d.serve({ sessionId: 'non-canonical', input, program: sums(2), window: { count: 3, closeAfterMs: 30_000 } });
    const honest = [d.submit({ sessionId: 'non-canonical', input: 1n }), d.submit({ sessionId: 'non-canonical', input: 2n })];
    const bad = d.submit({ sessionId: 'non-canonical', input: 4n, _cheat: { input: (_server, eps) => void eps.fill(0xff, 0, 16) } });
    expect((await failure(bad)).code).toBe('CLIENT_REFUSED');
    for (const c of await Promise.all(honest)) expect(c.outputs).toEqual([3n, 2n]);
    for (const r of await run) expect((r as PromiseFulfilledResult<{ dropped: { reason: string }[] }>).value.dropped.map((x) => x.reason)).toEqual(['did not send its input to every server in time']);
  });

  it('a server that forwards a digest its client never signed is caught by the honest servers (CHEATING_DETECTED naming it, at one of them at least)', async () => {
    const d = await deploy(3);
    const run = d.serve(
      { sessionId: 'forge', input, program: sums(3), window: { count: 2, closeAfterMs: 30_000 } },
      (j) => (j === 2 ? { _cheat: { digestForwarded: (_i: number, digest: Uint8Array) => void (digest[0]! ^= 1) } } : {}),
    );
    const clients = Promise.allSettled([d.submit({ sessionId: 'forge', input: 1n, timeoutMs: 20_000 }), d.submit({ sessionId: 'forge', input: 2n, timeoutMs: 20_000 })]);
    const results = await run;
    caughtByOneAtLeast([results[0]!, results[1]!], 'CHEATING_DETECTED', 2);
    for (const c of await clients) expect(c.status).toBe('rejected');
  });

  it("a server that changes a client's masked input before the run: the honest servers abort before any output (PARAMETER_MISMATCH)", async () => {
    const d = await deploy(2);
    const run = d.serve(
      { sessionId: 'change', input, program: sums(2), window: { count: 2, closeAfterMs: 30_000 } },
      (j) => (j === 1 ? { _cheat: { inputUsed: (_i: number, eps: Uint8Array) => void (eps[0]! ^= 1) } } : {}),
    );
    const clients = await Promise.allSettled([d.submit({ sessionId: 'change', input: 1n, timeoutMs: 20_000 }), d.submit({ sessionId: 'change', input: 2n, timeoutMs: 20_000 })]);
    const results = await run;
    const e = (results[0] as PromiseRejectedResult).reason;
    expect(results[0]!.status).toBe('rejected');
    expect(e.code).toBe('PARAMETER_MISMATCH');
    for (const c of clients) expect(c.status).toBe('rejected');
  });

  it('a server whose control messages are not JSON (bytes that are not UTF-8): the other servers abort, one at least with MALFORMED_MESSAGE naming it; nothing hangs', async () => {
    const d = await deploy(3);
    const run = d.serve(
      { sessionId: 'garbled', input, program: sums(3), window: { count: 2, closeAfterMs: 30_000 } },
      (j) => (j === 0 ? { _cheat: { control: () => Uint8Array.of(0xff, 0xfe, 0x7b) } } : {}),
    );
    const clients = Promise.allSettled([d.submit({ sessionId: 'garbled', input: 1n, timeoutMs: 20_000 }), d.submit({ sessionId: 'garbled', input: 2n, timeoutMs: 20_000 })]);
    const results = await run;
    caughtByOneAtLeast([results[1]!, results[2]!], 'MALFORMED_MESSAGE', 0);
    expect(results[0]!.status).toBe('rejected');
    for (const c of await clients) expect(c.status).toBe('rejected');
  });

  it('a server whose control message is JSON of the wrong shape: server 0 aborts with MALFORMED_MESSAGE naming it', async () => {
    const d = await deploy(3);
    const run = d.serve(
      { sessionId: 'misshapen', input, program: sums(3), window: { count: 2, closeAfterMs: 30_000 } },
      (j) => (j === 2 ? { _cheat: { control: () => new TextEncoder().encode('{"t":"have","keys":7}') } } : {}),
    );
    const clients = Promise.allSettled([d.submit({ sessionId: 'misshapen', input: 1n, timeoutMs: 20_000 }), d.submit({ sessionId: 'misshapen', input: 2n, timeoutMs: 20_000 })]);
    const results = await run;
    const e = (results[0] as PromiseRejectedResult).reason;
    expect(results[0]!.status).toBe('rejected');
    expect(e.code).toBe('MALFORMED_MESSAGE');
    expect(e.peer).toBe(2);
    for (const r of results) expect(r.status).toBe('rejected');
    for (const c of await clients) expect(c.status).toBe('rejected');
  });

  it('a server that sends a client a wrong result: the client refuses it (CHEATING_DETECTED)', async () => {
    const d = await deploy(2);
    const run = d.serve(
      { sessionId: 'lie', input, program: sums(2), window: { count: 1, closeAfterMs: 30_000 } },
      (j) => (j === 0 ? { _cheat: { result: (outs: string[]) => void (outs[0] = '12345') } } : {}),
    );
    const err = await failure(d.submit({ sessionId: 'lie', input: 9n }));
    expect(err.code).toBe('CHEATING_DETECTED');
    await run;
  });

  it('a client that vanishes after its masks is dropped without stopping the run', async () => {
    const d = await deploy(2);
    const run = d.serve(
      { sessionId: 'vanish', input, program: sums(2), window: { count: 3, closeAfterMs: 30_000 } },
    );
    // Its closed link drops it; the input deadline (30 s by default) is left long so that the
    // honest clients never race it while the servers' MASCOT shares their thread.
    const controller = new AbortController();
    const gone = d.submit({ sessionId: 'vanish', input: 100n, signal: controller.signal, onProgress: (p) => void (p.phase === 'masks' && controller.abort()) });
    const stay = [d.submit({ sessionId: 'vanish', input: 1n }), d.submit({ sessionId: 'vanish', input: 2n })];
    await failure(gone);
    for (const c of await Promise.all(stay)) expect(c.outputs).toEqual([3n, 2n]);
    for (const r of await run) expect((r as PromiseFulfilledResult<{ dropped: unknown[] }>).value.dropped).toHaveLength(1);
  });

  it('a client that comes after the window closed is refused (CLIENT_REFUSED)', async () => {
    const d = await deploy(2);
    const run = d.serve({ sessionId: 'late', input, program: sums(2), window: { count: 1, closeAfterMs: 30_000 } });
    const first = await d.submit({ sessionId: 'late', input: 3n });
    expect(first.outputs[0]).toBe(3n);
    await run;
    const err = await failure(d.submit({ sessionId: 'late', input: 4n, timeoutMs: 5_000 }));
    expect(['CLIENT_REFUSED', 'PEER_DISCONNECTED', 'TIMEOUT']).toContain(err.code);
  });
});
