// Every protocol of the registry runs from the command line: `webmpc eval` runs each one (the
// circuit protocols AES-128 against the FIPS-197 vector, the program ones a signed subtraction),
// and `eval --help` / `party --help` name each one with the options its module lists. A protocol
// added to the registry that the CLI cannot run fails here.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProgramBuilder } from '../../dist/program/index.js';
import { protocols } from '../../dist/protocols/index.js';
import { circuitsDir } from '../helpers.js';
import { startServer } from '../teleport/helpers.js';
import { cli, FIPS } from './helpers.js';

const AES = join(circuitsDir(), 'aes_128.txt');
const names = Object.keys(protocols) as (keyof typeof protocols)[];

let scratch: string;
let program: string;
let server: Awaited<ReturnType<typeof startServer>>;

/** The options a protocol cannot run without, beyond what to compute (none for most). */
const required = (name: string): string[] =>
  name === 'teleport-yao'
    ? ['--mode', 'semi-honest', '--enclave', server.url, '--simulated-measurement', server.measurement!, '--allow-simulated-enclave']
    : [];

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'webmpc-cli-registry-'));
  const b = new ProgramBuilder({ parties: 2 });
  b.output(b.sint(0, 16).sub(b.sint(1, 16)));
  program = join(scratch, 'sub.bin');
  writeFileSync(program, (await b.build()).bytes);
  server = await startServer();
});

afterAll(async () => {
  await server?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('the protocol registry on the command line', () => {
  it('webmpc eval runs every registered protocol', async () => {
    expect(names).toContain('teleport-yao');
    for (const name of names) {
      const job =
        protocols[name].computes === 'program'
          ? { args: ['--program', program, '--input', '1=-5', '--input', '2=7'], out: '-12\n' }
          : { args: ['--circuit', AES, '--input', `1=${FIPS.key}`, '--input', `2=${FIPS.pt}`], out: `${FIPS.ct}\n` };
      const r = await cli(['eval', '--protocol', name, ...job.args, ...required(name)], 90_000);
      expect(r, `${name}: ${r.stderr}`).toEqual({ code: 0, stdout: job.out, stderr: '' });
    }
  }, 240_000);

  it('eval --help and party --help name every protocol and, under it, the run options its module lists', async () => {
    const flag: Record<string, string> = { garbler: '--garbler P', evaluator: '--evaluator P', rho: '--rho N', mode: '--mode M', enclave: '--enclave URL' };
    for (const command of ['eval', 'party']) {
      const help = await cli([command, '--help']);
      expect(help.code).toBe(0);
      for (const name of names) expect(help.stdout).toMatch(new RegExp(`^ +${name} +\\d`, 'm'));
      expect(help.stdout).toMatch(/--threads N/);
      expect(help.stdout).toMatch(/--no-worker/);
      for (const name of names) {
        for (const role of protocols[name].roleOptions as readonly string[]) {
          if (!(role in flag)) continue;
          // The flag's section names the protocol among those that take it.
          const section = new RegExp(`With --protocol [^\\n]*\\b${name}\\b[^\\n]*:\\n(  [^\\n]*\\n|  +[^\\n]*\\n)*?  ${flag[role]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);
          expect(help.stdout, `${command}: ${name} ${role}`).toMatch(section);
        }
      }
    }
  });
});
