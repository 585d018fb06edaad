// `webmpc eval --protocol authgc` (all parties in one process) and `webmpc party --protocol authgc
// --parties N` (one process per party over WebRTC, with a pinned key per peer) as a user runs
// them, checked against the FIPS-197 vector and against BigInt arithmetic; a party killed
// mid-run makes every other party exit 1 promptly.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as net from '../../dist/net/node.js';
import { CircuitBuilder } from '../../dist/circuit/index.js';
import { circuitsDir } from '../helpers.js';
import { CLI, FIPS, cli as run } from './helpers.js';

const AES = join(circuitsDir(), 'aes_128.txt');
const cli = (args: string[], timeout = 60_000) => run(args, timeout);

const hex64 = (v: bigint) => v.toString(16).padStart(16, '0');
const rand64 = () => BigInt(`0x${randomBytes(8).toString('hex')}`);
const MASK = (1n << 64n) - 1n;

let scratch: string;
/** A circuit of three 64-bit inputs (parties 0, 1, 2): their sum and whether x0 < x2. */
let sum3: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'webmpc-cli-authgc-'));
  const bld = new CircuitBuilder();
  const [a, b, c] = [0, 1, 2].map((p) => bld.input(p, 64));
  bld.output(a!.add(b!).add(c!));
  bld.output(a!.lt(c!));
  sum3 = join(scratch, 'sum3.wmpc');
  writeFileSync(sum3, bld.build().toBinary());
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('webmpc eval --protocol authgc', () => {
  it('AES-128 with 2 and with 3 parties (the third owns nothing) gives the FIPS-197 vector', async () => {
    for (const extra of [[], ['--parties', '3']]) {
      const r = await cli(['eval', '--circuit', AES, '--protocol', 'authgc', '--input', `1=${FIPS.key}`, '--input', `2=${FIPS.pt}`, ...extra]);
      expect(r, r.stderr).toMatchObject({ code: 0, stdout: `${FIPS.ct}\n`, stderr: '' });
    }
  }, 120_000);

  it('three owners (parties from --owners), party 2 evaluates; --json agrees with plain and BigInt', async () => {
    const x = [rand64(), rand64(), rand64()];
    const inputs = x.flatMap((v, i) => ['--input', `${i + 1}=${v.toString(16)}`]);
    const want = [hex64((x[0]! + x[1]! + x[2]!) & MASK), x[0]! < x[2]! ? '01' : '00'];
    const r = await cli(['eval', '--circuit', sum3, '--protocol', 'authgc', '--owners', '0,1,2', '--evaluator', '2', '--json', ...inputs]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ outputs: want, protocol: 'authgc', parties: 3 });
    const plain = await cli(['eval', '--circuit', sum3, '--protocol', 'plain', '--owners', '0,1,2', ...inputs]);
    expect(plain.stdout).toBe(`${want.join('\n')}\n`);
  }, 120_000);

  it('an evaluator outside the parties is a usage error (exit 2, nothing on stdout)', async () => {
    const r = await cli(['eval', '--circuit', sum3, '--protocol', 'authgc', '--owners', '0,1,2', '--evaluator', '3', '--input', '1=1', '--input', '2=2', '--input', '3=3']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('webmpc party --protocol authgc', () => {
  let signaling: net.SignalingServer;
  let keys: string[];
  let pubs: string[];
  beforeAll(async () => {
    signaling = await net.startSignalingServer({ port: 0 });
    keys = [0, 1, 2].map((p) => join(scratch, `p${p}.key`));
    pubs = await Promise.all(keys.map(async (k) => (await cli(['key', k])).stdout.trim()));
  });
  afterAll(async () => {
    await signaling?.close();
  });

  /** Party p's arguments: sum3 with every other party's key pinned (--peer-key Q=HEX per peer). */
  const args = (p: number, room: string, input: bigint) => [
    'party', '--protocol', 'authgc', '--parties', '3', '--party', String(p), '--circuit', sum3,
    '--signal', signaling.url, '--room', room, '--input', input.toString(16), '--identity', keys[p]!,
    ...[0, 1, 2].filter((q) => q !== p).flatMap((q) => ['--peer-key', `${q}=${pubs[q]}`]), '--timeout', '30000',
  ];

  it('three processes over WebRTC with pinned keys all get the outputs', async () => {
    const x = [rand64(), rand64(), rand64()];
    const room = `authgc-${randomBytes(4).toString('hex')}`;
    const rs = await Promise.all([0, 1, 2].map((p) => cli(args(p, room, x[p]!), 90_000)));
    const want = `${hex64((x[0]! + x[1]! + x[2]!) & MASK)}\n${x[0]! < x[2]! ? '01' : '00'}\n`;
    for (const r of rs) expect(r, r.stderr).toMatchObject({ code: 0, stdout: want });
    // No party's input shows up at another.
    for (const [p, r] of rs.entries()) for (const q of [0, 1, 2]) if (q !== p) expect(r.stdout + r.stderr).not.toContain(x[q]!.toString(16));
  }, 120_000);

  it('a party killed after authentication: the other two exit 1 with a typed error, by the link’s liveness (3 s), not a hang', async () => {
    const room = `authgc-kill-${randomBytes(4).toString('hex')}`;
    const children = [0, 1, 2].map((p) => spawn(process.execPath, [CLI, ...args(p, room, 7n)], { stdio: ['ignore', 'pipe', 'pipe'] }));
    const err = children.map(() => '');
    const exits = children.map(
      (c, p) =>
        new Promise<{ code: number | null; at: number }>((resolve) => {
          c.stderr!.on('data', (d: Buffer) => (err[p] += d.toString()));
          c.once('exit', (code) => resolve({ code, at: performance.now() }));
        }),
    );
    // Wait until party 2 has authenticated both peers, then kill it without a goodbye.
    const deadline = Date.now() + 60_000;
    while ((err[2]!.match(/authenticated/g) ?? []).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(err[2], 'party 2 never authenticated its peers').toMatch(/authenticated/);
    const t0 = performance.now();
    children[2]!.kill('SIGKILL');
    const done = await Promise.all(exits);
    for (const p of [0, 1]) {
      expect(done[p]!.code, err[p]).toBe(1);
      expect(err[p]).toMatch(/party 2 (silent|disconnected|aborted)|PEER_DISCONNECTED/i);
      // Liveness ends it after 3 s of silence; the margin is for a loaded machine, and still
      // below the 30 s (--timeout) a stuck receive would take.
      expect(done[p]!.at - t0).toBeLessThan(20_000);
    }
  }, 120_000);
});
