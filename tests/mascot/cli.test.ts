// `webmpc eval --protocol mascot --program FILE` and `webmpc party --protocol mascot` as a user
// runs them (node dist/cli.js in child processes): a program file written from the builder's
// bytes, outputs as decimal integers (signed ones negative), against the plain answers; mistakes
// exit 2 with one line and no input value.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProgramBuilder, vickreyAuction } from '../../dist/program/index.js';
import { cli as run, partiesOverWebSockets } from '../cli/helpers.js';

const cli = (args: string[]) => run(args, 100_000);

let dir: string;
let auction: string;
let signed: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'webmpc-mascot-cli-'));
  auction = join(dir, 'vickrey.bin');
  writeFileSync(auction, (await vickreyAuction({ parties: 3, bids: 3, bits: 32 })).bytes);
  const b = new ProgramBuilder({ parties: 2 });
  const x = b.sint(0, 16);
  const y = b.sint(1, 16);
  b.output(x.sub(y));
  b.output(x.lt(y), { to: 1 });
  signed = join(dir, 'signed.bin');
  writeFileSync(signed, (await b.build()).bytes);
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('webmpc eval --protocol mascot', () => {
  it('a 3-party Vickrey auction: winner 1, price 400', async () => {
    const r = await cli(['eval', '--protocol', 'mascot', '--program', auction, '--input', '1=300', '--input', '2=500', '--input', '3=400']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('1\n400\n');
  }, 120_000);

  it('signed inputs in decimal and hex, --json', async () => {
    const r = await cli(['eval', '--protocol', 'mascot', '--program', signed, '--input', '1=-5', '--input', '2=0x7', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ outputs: ['-12', '1'], protocol: 'mascot', parties: 2 });
  }, 120_000);

  it('mistakes: out-of-range input (without its value), missing inputs, a truncated program, --circuit with mascot', async () => {
    const cases: [string[], RegExp][] = [
      [['--program', signed, '--input', '1=40000', '--input', '2=1'], /^webmpc eval: input 1 is out of range for a 16-bit signed integer\n$/],
      [['--program', auction, '--input', '1=3'], /^webmpc eval: missing input value\(s\) 2, 3 \(--input N=INT\)\n$/],
      [['--program', join(dir, 'nope.bin')], /^webmpc eval: cannot read program .*nope\.bin: no such file\n$/],
      [['--program', signed, '--input', '1=abc'], /^webmpc eval: --input must be N=INT/],
      [['--program', signed, '--circuit', auction], /--circuit and --owners do not apply/],
    ];
    const truncated = join(dir, 'truncated.bin');
    writeFileSync(truncated, (await vickreyAuction({ parties: 2, bids: 2, bits: 8 })).bytes.subarray(0, 20));
    cases.push([['--program', truncated], /^webmpc eval: malformed program .*truncated\.bin: program truncated at byte 20\n$/]);
    for (const [args, text] of cases) {
      const r = await cli(['eval', '--protocol', 'mascot', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(text);
      expect(r.stderr).not.toContain('40000');
    }
  }, 120_000);
});

describe('webmpc party --protocol mascot', () => {
  it('two processes over WebSockets: each prints the outputs revealed to it, in decimal', async () => {
    // signed: x - y to both parties, x < y to party 1 only.
    const [p0, p1] = await partiesOverWebSockets(2, `mascot-${Date.now()}`, (p) => [
      // A negative value is written --input=-5 (a bare -5 would read as an option).
      '--protocol', 'mascot', '--program', signed, '--insecure', p === 0 ? '--input=-5' : '--input=0x7',
      ...(p === 1 ? ['--json'] : []),
    ]);
    expect((await p0!.exit).code, p0!.stderr()).toBe(0);
    expect((await p1!.exit).code, p1!.stderr()).toBe(0);
    expect(p0!.stdout()).toBe('-12\n(not revealed to this party)\n');
    expect(JSON.parse(p1!.stdout())).toMatchObject({ outputs: ['-12', '1'], protocol: 'mascot', party: 1 });
    expect(p0!.stderr()).toMatch(/computing in (an engine worker|engine workers), offering \d+ threads?\n/);
  }, 120_000);

  it('the program names the parties: a --party or --input count it contradicts is a usage error', async () => {
    const r = await cli(['party', '--protocol', 'mascot', '--program', auction, '--party', '0', '--parties', '2', '--insecure', '--room', 'x', '--signal', 'ws://127.0.0.1:1', '--input', '1']);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toMatch(/^webmpc party: the program is for 3 parties, not --parties 2\n$/);
    const r2 = await cli(['party', '--protocol', 'mascot', '--program', auction, '--party', '3', '--insecure', '--room', 'x', '--signal', 'ws://127.0.0.1:1', '--input', '1']);
    expect(r2.stderr).toMatch(/^webmpc party: --party must be a party index from 0 to 2\n$/);
    const r3 = await cli(['party', '--protocol', 'mascot', '--program', auction, '--party', '1', '--insecure', '--room', 'x', '--signal', 'ws://127.0.0.1:1', '--input', '1', '--input', '2']);
    expect(r3.stderr).toMatch(/^webmpc party: party 1 owns 1 input value\(s\) \(2\); 2 --input given\n$/);
  }, 60_000);
});
