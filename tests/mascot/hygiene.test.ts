// Secret hygiene in the MASCOT module (webmpc_mascot_bg.wasm), a Wasm instance of its own with
// its own linear memory: once the sessions that ran a program are closed (their parties freed),
// neither party's input is left anywhere in that memory (the zero-on-free allocator and the stack
// scrub of webmpc-bindings-glue, which every module links, are what make this pass). The main
// module's hygiene is tests/hygiene.test.ts. (Checked to fail with the allocator's zeroing
// commented out.)
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from '../../dist/index.js';
import { _moduleMemory } from '../../dist/engine/modules.js';
import { ProgramBuilder } from '../../dist/program/index.js';
import { group } from '../session/helpers.js';
import { P } from './reference.js';

beforeAll(async () => {
  await init();
});

/** `x` as the module holds a field element: 16 bytes, little-endian. */
function le16(x: bigint): Uint8Array {
  const out = new Uint8Array(16);
  for (let i = 0; i < 16; i++) out[i] = Number((x >> BigInt(8 * i)) & 0xffn);
  return out;
}

/** Offsets at which `needle` occurs in `buffer`. */
function find(buffer: ArrayBuffer, needle: Uint8Array): number[] {
  const hay = Buffer.from(buffer);
  const hits: number[] = [];
  for (let at = hay.indexOf(needle); at !== -1; at = hay.indexOf(needle, at + 1)) hits.push(at);
  return hits;
}

describe('no secret is left in the MASCOT module’s memory', () => {
  it('2 parties, F_p: every input of a sum of products, once the sessions are closed', async () => {
    const N = 64;
    const b = new ProgramBuilder({ parties: 2, field: 'prime' });
    const xs = Array.from({ length: N }, () => b.element(0));
    const ys = Array.from({ length: N }, () => b.element(1));
    b.output(xs.map((x, i) => x.mul(ys[i]!)).reduce((acc, v) => acc.add(v)));
    const program = await b.build();
    // Random 120-bit elements: their 16-byte encodings cannot turn up by chance.
    const random = () => BigInt(`0x${randomBytes(15).toString('hex')}`) % P;
    const mine = [0, 1].map(() => Array.from({ length: N }, random));
    // On this thread, so its module's memory is the one scanned here (in the default worker mode
    // the memory goes with the worker, which close() terminates).
    const g = await group(2, 60_000, { worker: false });
    const outs = await Promise.all(
      g.sessions.map((s, party) => s.run(program, { protocol: 'mascot', inputs: program.encodeInputs(party, mine[party]!) })),
    );
    const sum = mine[0]!.reduce((acc, x, i) => (acc + x * mine[1]![i]!) % P, 0n);
    expect(program.decodeOutputs(outs[0]!)).toEqual([sum]);
    const values = mine.flat();
    await Promise.all(g.sessions.map((s) => s.close()));
    const memory = _moduleMemory('mascot');
    expect(memory, 'the MASCOT module was loaded by the first run').toBeDefined();
    // The scan finds an encoding where there is one (so an empty result means something).
    const planted = new Uint8Array(4096);
    planted.set(le16(values[0]!), 100);
    expect(find(planted.buffer, le16(values[0]!))).toEqual([100]);
    const left = values.flatMap((v, i) => find(memory!.buffer, le16(v)).map((at) => `input ${i}@${at}`));
    expect(left).toEqual([]);
  }, 60_000);
});
