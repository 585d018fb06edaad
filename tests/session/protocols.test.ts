// The protocol layer: the registry and its modules' documented guarantees, the parameter
// agreement before every run (protocol, roles, owners, outputs, operation), preprocessing, and a
// peer that sends garbage instead of its parameter record.
import { beforeAll, describe, expect, it } from 'vitest';
import { init, ProtocolAbort, WebmpcError, type Progress } from '../../dist/index.js';
import { CircuitBuilder } from '../../dist/circuit/index.js';
import { protocols } from '../../dist/protocols/index.js';
import { be, group, hex, pair, rejection } from './helpers.js';

beforeAll(async () => {
  await init();
});

/** x > y on 32-bit values owned by party 0 and party 1, revealed to both. */
function comparison() {
  const b = new CircuitBuilder();
  const x = b.input(0, 32);
  const y = b.input(1, 32);
  b.output(x.gt(y).toUInt());
  b.output(x.add(y));
  return b.build();
}

async function bothMismatch(runs: [Promise<unknown>, Promise<unknown>], field: RegExp): Promise<void> {
  const [r0, r1] = await Promise.all(runs.map(rejection));
  for (const [r, peer] of [
    [r0!, 1],
    [r1!, 0],
  ] as const) {
    expect(r.error).toBeInstanceOf(ProtocolAbort);
    expect(r.error.code).toBe('PARAMETER_MISMATCH');
    expect(r.error.peer).toBe(peer);
    expect(r.error.message).toMatch(field);
  }
}

describe('protocol registry', () => {
  it('registers each module under its own name, with its parties, inputs and what it protects against', () => {
    for (const [key, m] of Object.entries(protocols)) {
      expect(m.name).toBe(key);
      expect(['none', 'semi-honest', 'malicious (abort)']).toContain(m.security);
      expect(m.protects.length).toBeGreaterThan(40);
      expect(['circuit', 'program']).toContain(m.computes);
      expect(m.parties.min).toBeGreaterThanOrEqual(2);
      expect(m.parties.max).toBeGreaterThanOrEqual(m.parties.min);
      expect(Number.isInteger(m.version)).toBe(true);
    }
    expect(protocols.yao2pc).toMatchObject({ security: 'semi-honest', computes: 'circuit', parties: { min: 2, max: 2 }, roleOptions: ['garbler'] });
    // What a cheating party can do is said, not only the model's name.
    expect(protocols.yao2pc.protects).toMatch(/not checked/);
    expect(protocols.yao2pc.protects).toMatch(/evaluator can choose the garbler's outputs/);
    // MASCOT's aborts are not unanimous (tests/selective_abort.rs in the spdz crate shows it).
    expect(protocols.mascot.protects).toMatch(/aborts may be selective/);
    expect(protocols.plain).toMatchObject({ security: 'none', roleOptions: [] });
    expect(protocols.plain.preprocess).toBeUndefined();
  });
});

describe('parameter agreement', () => {
  const c = comparison();

  it('yao2pc against plain: PARAMETER_MISMATCH at both parties naming the protocol, and the session stays usable', async () => {
    const [s0, s1, close] = await pair();
    await bothMismatch(
      [s0.run(c, { inputs: [be(7, 4)], protocol: 'yao2pc' }), s1.run(c, { inputs: [be(5, 4)], protocol: 'plain' })],
      /disagrees on the protocol: "yao2pc" here, "plain" at party 1|disagrees on the protocol: "plain" here, "yao2pc" at party 0/,
    );
    const [o0, o1] = await Promise.all([
      s0.run(c, { inputs: [be(7, 4)], protocol: 'yao2pc' }),
      s1.run(c, { inputs: [be(5, 4)], protocol: 'yao2pc' }),
    ]);
    expect([hex(o0[0]), hex(o1[1])]).toEqual(['01', '0000000c']);
    await close();
  });

  it('a different garbler, input owner or output assignment is PARAMETER_MISMATCH naming the field', async () => {
    const [s0, s1, close] = await pair();
    await bothMismatch(
      [s0.run(c, { inputs: [be(7, 4)], garbler: 0 }), s1.run(c, { inputs: [be(5, 4)], garbler: 1 })],
      /disagrees on the roles: \{"garbler":[01]\} here, \{"garbler":[01]\} at party [01]/,
    );
    // Bristol text carries no owners, so each party may assign them; here they assign differently.
    const text = c.toBristol();
    await bothMismatch(
      [s0.run(text, { inputs: [be(7, 4)], owners: [0, 1] }), s1.run(text, { inputs: [], owners: [0, 0] })],
      /disagrees on the owners \(owner of input value 1\)/,
    );
    await bothMismatch(
      [s0.run(c, { inputs: [be(7, 4)], outputs: [[0], [0, 1]] }), s1.run(c, { inputs: [be(5, 4)], outputs: [[1], [0, 1]] })],
      /disagrees on the outputs \(recipients of output value 0\)/,
    );
    // Still in step after three verdicts.
    const [o0] = await Promise.all([s0.run(c, { inputs: [be(7, 4)] }), s1.run(c, { inputs: [be(5, 4)] })]);
    expect(hex(o0[0])).toBe('01');
    await close();
  });

  it('three parties: one that differs makes all three reject, and the next run is in step', async () => {
    const g = await group(3);
    const b = new CircuitBuilder();
    const x = b.input(0, 8);
    const y = b.input(1, 8);
    const z = b.input(2, 8);
    b.output(x.add(y).add(z));
    const sum = b.build();
    const inputs = [[be(1, 1)], [be(2, 1)], [be(3, 1)]];
    const outputsOf = (p: number) => (p === 2 ? [[0, 1]] : [[0, 1, 2]]);
    const results = await Promise.allSettled(g.sessions.map((s, p) => s.run(sum, { inputs: inputs[p]!, protocol: 'plain', outputs: outputsOf(p) })));
    for (const r of results) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'PARAMETER_MISMATCH' });
    const outs = await Promise.all(g.sessions.map((s, p) => s.run(sum, { inputs: inputs[p]!, protocol: 'plain' })));
    expect(outs.map((o) => hex(o[0]))).toEqual(['06', '06', '06']);
    // yao2pc is for two parties: refused before anything is sent.
    await expect(g.sessions[0]!.run(sum, { inputs: inputs[0]! })).rejects.toThrow(/exactly 2 parties; this session has 3/);
    await g.close();
  });

  it('a peer that sends something other than its parameter record is MALFORMED_MESSAGE naming it', async () => {
    const [s0, , close, transports] = await pair();
    // Party 1 deviates: raw bytes where its record belongs.
    await transports[1]!.send(0, new Uint8Array([1, 2, 3]));
    const r = await rejection(s0.run(c, { inputs: [be(7, 4)] }));
    expect(r.error).toBeInstanceOf(ProtocolAbort);
    expect(r.error).toMatchObject({ code: 'MALFORMED_MESSAGE', peer: 1 });
    await close();
  });

  it('a peer whose record is well formed but names another circuit is caught (PARAMETER_MISMATCH)', async () => {
    const [s0, s1, close, transports] = await pair();
    // The time measured below is the abort's, not the engine workers' start-up.
    await Promise.all([s0.ready(), s1.ready()]);
    // Party 1 deviates: it runs the circuit but tells party 0 another content hash.
    const real = transports[1]!.send.bind(transports[1]!);
    let lies = 0;
    (transports[1] as { send: typeof real }).send = async (to, data) => {
      if (lies > 0) return real(to, data); // only the first message is the record
      const record = JSON.parse(new TextDecoder().decode(data)) as { fields: [string, string][] };
      for (const f of record.fields) if (f[0] === 'hash') (f[1] = JSON.stringify('00'.repeat(32))), lies++;
      return real(to, new TextEncoder().encode(JSON.stringify(record)));
    };
    const run1 = rejection(s1.run(c, { inputs: [be(5, 4)] }));
    const r0 = await rejection(s0.run(c, { inputs: [be(7, 4)] }));
    expect(lies).toBe(1);
    expect(r0.error).toBeInstanceOf(ProtocolAbort);
    expect(r0.error).toMatchObject({ code: 'PARAMETER_MISMATCH', peer: 1 });
    expect(r0.error.message).toMatch(/disagrees on the hash/);
    // The deviating party saw an honest record equal to its own and went on; party 0's app
    // ends the session, and party 1's run stops at once.
    const closedAt = Date.now();
    await s0.close();
    const r1 = await run1;
    expect(r1.error).toBeInstanceOf(WebmpcError);
    expect(r1.at - closedAt).toBeLessThan(1000);
    await close();
  });
});

describe('preprocessing', () => {
  const c = comparison();

  it('yao2pc: preprocess sets up the base OTs for a garbler ahead of time; the run then needs no setup', async () => {
    const [s0, s1, close] = await pair();
    const pre: Progress[] = [];
    await Promise.all([s0.preprocess('yao2pc', { garbler: 1, onProgress: (p) => pre.push(p) }), s1.preprocess('yao2pc', { garbler: 1 })]);
    expect(pre.map((p) => `${p.phase} ${p.done}/${p.total}`)).toEqual(['setup 0/1', 'setup 1/1']);
    expect(pre.at(-1)!.bytesSent).toBeGreaterThan(0);
    const seen: Progress[] = [];
    const [o0, o1] = await Promise.all([
      s0.run(c, { inputs: [be(3, 4)], garbler: 1, onProgress: (p) => seen.push(p) }),
      s1.run(c, { inputs: [be(9, 4)], garbler: 1 }),
    ]);
    expect([hex(o0[0]), hex(o1[1])]).toEqual(['00', '0000000c']);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((p) => p.phase === 'evaluating')).toBe(true);
    // The other garbler has its own setup: roles can be swapped within a session.
    const [p0] = await Promise.all([s0.run(c, { inputs: [be(30, 4)], garbler: 0 }), s1.run(c, { inputs: [be(9, 4)], garbler: 0 })]);
    expect(hex(p0[0])).toBe('01');
    await close();
  });

  it('preprocess against run, or with another garbler, is PARAMETER_MISMATCH naming the field', async () => {
    const [s0, s1, close] = await pair();
    await bothMismatch([s0.preprocess('yao2pc'), s1.run(c, { inputs: [be(5, 4)] })], /disagrees on the operation: "(preprocess|run)" here/);
    await bothMismatch([s0.preprocess('yao2pc', { garbler: 0 }), s1.preprocess('yao2pc', { garbler: 1 })], /disagrees on the params/);
    await Promise.all([s0.preprocess('yao2pc'), s1.preprocess('yao2pc')]);
    await close();
  });

  it('a protocol without preprocessing, or an option it does not take, is INVALID_ARGUMENT', async () => {
    const [s0, , close] = await pair();
    await expect(s0.preprocess('plain')).rejects.toThrow(/protocol 'plain' has no preprocessing/);
    await expect(s0.preprocess('yao2pc', { triples: 5 } as never)).rejects.toThrow(/option 'triples' does not apply to preprocess/);
    await close();
  });
});
