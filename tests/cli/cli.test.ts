// `webmpc eval` and `webmpc party` as a user runs them: `node dist/cli.js ...` in child processes,
// checked against the known answers of ../shared/circuits (FIPS-197 AES, the SHA-256 "abc"
// vector) and against BigInt arithmetic; user mistakes must exit 2 with one line on stderr.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as net from '../../dist/net/node.js';
import { CircuitBuilder } from '../../dist/circuit/index.js';
import type { Traffic } from '../../dist/index.js';
import { circuitsDir } from '../helpers.js';
import { cli, FIPS, live, partiesOverWebSockets, type Live, type Result } from './helpers.js';

const CIRCUITS = circuitsDir();
const AES = join(CIRCUITS, 'aes_128.txt');
const ADDER = join(CIRCUITS, 'adder64.txt');
const SHA = join(CIRCUITS, 'sha256.txt');

const hex64 = (v: bigint) => v.toString(16).padStart(16, '0');
const rand64 = () => BigInt(`0x${randomBytes(8).toString('hex')}`);

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'webmpc-cli-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('webmpc eval', () => {
  it('AES-128 (Bristol file) gives the FIPS-197 vector with yao2pc and plain', async () => {
    for (const protocol of ['yao2pc', 'plain']) {
      const r = await cli(['eval', '--circuit', AES, '--protocol', protocol, '--input', `1=${FIPS.key}`, '--input', `2=${FIPS.pt}`]);
      expect(r).toEqual({ code: 0, stdout: `${FIPS.ct}\n`, stderr: '' });
    }
  });

  it('adder64 agrees with BigInt, including the carry out of bit 63', async () => {
    const pairs: [bigint, bigint][] = [[2n ** 64n - 1n, 2n], [0n, 0n], [rand64(), rand64()], [rand64(), rand64()]];
    for (const [a, b] of pairs) {
      const r = await cli(['eval', '--circuit', ADDER, '--input', `1=${hex64(a)}`, '--input', `2=${hex64(b)}`]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`${hex64(BigInt.asUintN(64, a + b))}\n`);
    }
    // Short hex is a smaller number, not a malformed one.
    expect((await cli(['eval', '--circuit', ADDER, '--input', '1=5', '--input', '2=0x7'])).stdout).toBe(`${hex64(12n)}\n`);
  });

  it('--json prints one object: outputs, protocol, ms, andGates; yao2pc and plain agree', async () => {
    const block = `616263${'80'}${'00'.repeat(52)}${'0000000000000018'}`;
    const iv = '6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19';
    const outs: unknown[] = [];
    for (const protocol of ['yao2pc', 'plain']) {
      const r = await cli(['eval', '--circuit', SHA, '--protocol', protocol, '--input', `1=${block}`, '--input', `2=${iv}`, '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trim().split('\n')).toHaveLength(1);
      const j = JSON.parse(r.stdout) as { outputs: string[]; protocol: string; ms: number; andGates: number; traffic: Traffic[] };
      expect(Object.keys(j).sort()).toEqual(['andGates', 'ms', 'outputs', 'protocol', 'traffic']);
      // Each party's traffic: what one sent, the other received; a few rounds, not one per gate.
      expect(j.traffic).toHaveLength(2);
      expect(j.traffic[0]!.total.bytesSent).toBe(j.traffic[1]!.total.bytesReceived);
      expect(j.traffic[1]!.total.bytesSent).toBe(j.traffic[0]!.total.bytesReceived);
      for (const t of j.traffic) expect(t.total.rounds).toBeGreaterThanOrEqual(2);
      for (const t of j.traffic) expect(t.total.rounds).toBeLessThan(20);
      expect(j).toMatchObject({
        outputs: ['ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
        protocol,
        andGates: 22573,
      });
      expect(j.ms).toBeGreaterThan(0);
      outs.push(j.outputs);
    }
    expect(outs[0]).toEqual(outs[1]);
    // Random inputs: the two protocols still agree.
    const a = randomBytes(16).toString('hex');
    const b = randomBytes(16).toString('hex');
    const [y, p] = await Promise.all(
      ['yao2pc', 'plain'].map((protocol) => cli(['eval', '--circuit', AES, '--protocol', protocol, '--input', `1=${a}`, '--input', `2=${b}`])),
    );
    expect(y!.code).toBe(0);
    expect(y!.stdout).toBe(p!.stdout);
  });

  it('reads webmpc binary circuits (WMPC magic), several outputs one per line', async () => {
    const bld = new CircuitBuilder();
    const x = bld.input(0, 16);
    const y = bld.input(1, 16);
    bld.output(x.add(y));
    bld.output(x.lt(y));
    const file = join(scratch, 'sum-lt.wmpc');
    writeFileSync(file, bld.build().toBinary());
    const r = await cli(['eval', '--circuit', file, '--input', '1=fff0', '--input', '2=0011', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ outputs: ['0001', '00'], andGates: 15 + 16 });
    const plain = await cli(['eval', '--circuit', file, '--protocol', 'plain', '--input', '1=1', '--input', '2=2']);
    expect(plain.stdout).toBe('0003\n01\n');
  });

  it('user errors: one line on stderr, exit code 2, nothing on stdout, no secret echoed', async () => {
    writeFileSync(join(scratch, 'bad.txt'), 'this is not a circuit\n');
    writeFileSync(join(scratch, 'bad.wmpc'), Buffer.from('WMPC\x01\x00\x00\x00\x07', 'latin1'));
    writeFileSync(join(scratch, 'noise.bin'), Buffer.from([0xff, 0xfe, 0x00, 0x81, 0xc3]));
    const secret = 'abcdef0123456789abcdef0123456789';
    const cases: [string[], RegExp][] = [
      [['--circuit', ADDER, '--input', '1=1'], /missing input value\(s\) 2/],
      [['--circuit', ADDER, '--input', '1=1', '--input', '2=2', '--input', '3=3'], /the circuit has 2 input value/],
      [['--circuit', ADDER, '--input', `1=${secret}`, '--input', '2=2'], /input 1 does not fit in the circuit's 64 bits/],
      [['--circuit', ADDER, '--input', '1=xyz', '--input', '2=2'], /must be a hexadecimal number/],
      [['--circuit', ADDER, '--input', '1=1', '--input', '1=2'], /given twice/],
      [['--circuit', ADDER, '--input', '12'], /--input must be N=HEX/],
      [['--circuit', ADDER, '--protocol', 'gmw'], /--protocol must be yao2pc, authgc, plain, mascot or teleport-yao/],
      [['--circuit', join(scratch, 'missing.txt'), '--input', '1=1'], /cannot read circuit .*missing\.txt: no such file/],
      [['--circuit', scratch], /is a directory/],
      [['--circuit', join(scratch, 'bad.txt')], /malformed circuit .*bad\.txt: line 1/],
      [['--circuit', join(scratch, 'bad.wmpc')], /malformed circuit .*bad\.wmpc/],
      [['--circuit', join(scratch, 'noise.bin')], /neither a webmpc binary circuit nor Bristol Fashion text/],
      [['--input', '1=1'], /--circuit FILE is required/],
      [['--circuit', ADDER, '--frobnicate'], /Unknown option '--frobnicate'/],
    ];
    const results = await Promise.all(cases.map(([args]) => cli(['eval', ...args])));
    results.forEach((r, i) => {
      const [args, pattern] = cases[i]!;
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(r.stderr).toMatch(/^webmpc eval: [^\n]+\n$/);
      expect(r.stderr).toMatch(pattern);
      expect(r.stderr).not.toContain(secret);
    });
    expect((await cli(['nonsense'])).code).toBe(2);
  });
});

describe('webmpc party', () => {
  let signaling: net.SignalingServer;
  beforeAll(async () => {
    signaling = await net.startSignalingServer({ port: 0 });
  });
  afterAll(async () => {
    await signaling?.close();
  });

  /** Runs both parties as separate processes at once. */
  function both(argsFor: (party: number) => string[]): Promise<Result[]> {
    return Promise.all([0, 1].map((party) => cli(['party', ...argsFor(party)], 45_000)));
  }

  it('two processes run AES-128 over WebRTC after their people compared the SAS (--confirm), and both get the FIPS vector', async () => {
    const room = `cli-${randomBytes(6).toString('hex')}`;
    const parties = [0, 1].map((party) =>
      live([
        'party', '--circuit', AES, '--party', String(party), '--signal', signaling.url, '--room', room, '--confirm',
        '--input', party === 0 ? FIPS.key : FIPS.pt, ...(party === 1 ? ['--json'] : []),
      ]),
    );
    const sas = await Promise.all(parties.map((p) => p.waitFor(/short authentication string: (\d{3} \d{3})/)));
    // Read aloud, the two strings agree: both people say yes.
    expect(sas[0]![1]).toBe(sas[1]![1]);
    for (const p of parties) p.child.stdin!.end('y\n');
    const [e0, e1] = await Promise.all(parties.map((p) => p.exit));
    const [p0, p1] = parties as [Live, Live];
    expect(e0!.code, p0.stderr()).toBe(0);
    expect(e1!.code, p1.stderr()).toBe(0);
    expect(p0.stdout()).toBe(`${FIPS.ct}\n`);
    const j = JSON.parse(p1.stdout()) as { traffic: Traffic };
    expect(j).toMatchObject({ outputs: [FIPS.ct], protocol: 'yao2pc', party: 1 });
    // This party's traffic through the secure channel: the parameter agreement, then yao2pc's
    // setup and evaluation in a few rounds.
    expect(j.traffic.phases.agreement).toMatchObject({ rounds: 2, messagesSent: 1, messagesReceived: 1 });
    expect(j.traffic.total.bytesReceived).toBeGreaterThan(100_000); // the garbled tables
    expect(j.traffic.total.rounds).toBeLessThan(20);
    // Each side shows the other's key and never the other's input.
    expect(p0.stderr()).toMatch(/party 1 presents key [0-9a-f]{64}/);
    expect(p0.stderr()).toMatch(/authenticated \(confirmed\)/);
    expect(p0.stderr() + p0.stdout()).not.toContain(FIPS.pt);
    expect(p1.stderr() + p1.stdout()).not.toContain(FIPS.key);
  }, 60_000);

  it('without a way to authenticate the other party (no --peer-key, stdin not a terminal) it refuses before connecting', async () => {
    const r = await cli(['party', '--circuit', AES, '--party', '0', '--signal', signaling.url, '--room', 'x', '--input', '00']);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toMatch(/^webmpc party: cannot authenticate the other party: pass --peer-key HEX.*--insecure for experiments\n$/);
    const both = await cli(['party', '--circuit', AES, '--party', '0', '--signal', signaling.url, '--room', 'x', '--input', '00', '--insecure', '--peer-key', 'ab'.repeat(32)]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--peer-key and --insecure exclude each other/);
  });

  it('a squatter in the room is refused before any input is used (pinned key, or the person saying no), and every process exits at once', async () => {
    const real = join(scratch, 'real1.key');
    const realKey = (await cli(['key', real])).stdout.trim();
    // Pinned: party 0 expects the real party 1; a squatter took party 1's seat (it does not know
    // the real one's secret key).
    const room = `squat-${randomBytes(4).toString('hex')}`;
    const victim = live(['party', '--circuit', ADDER, '--party', '0', '--signal', signaling.url, '--room', room, '--input', '7', '--peer-key', realKey]);
    const squatter = live(['party', '--circuit', ADDER, '--party', '1', '--signal', signaling.url, '--room', room, '--input', '0', '--insecure']);
    const [v, q] = await Promise.all([victim.exit, squatter.exit]);
    expect(v.code, victim.stderr()).toBe(1);
    expect(q.code, squatter.stderr()).toBe(1);
    expect(victim.stdout() + squatter.stdout()).toBe('');
    expect(victim.stderr()).toMatch(/webmpc party: .*presented an identity key other than the expected one/);
    expect(squatter.stderr()).toMatch(/WARNING: --insecure/);
    for (const p of [victim, squatter]) expect(p.stderr()).not.toMatch(/still running/);

    // Confirm: the squatter's SAS matches nobody's (the real party 1 is not there to read one
    // out), so the person at party 0 says no.
    const room2 = `squat-${randomBytes(4).toString('hex')}`;
    const victim2 = live(['party', '--circuit', ADDER, '--party', '0', '--signal', signaling.url, '--room', room2, '--input', '7', '--confirm']);
    const squatter2 = live(['party', '--circuit', ADDER, '--party', '1', '--signal', signaling.url, '--room', room2, '--input', '0', '--confirm']);
    await Promise.all([victim2, squatter2].map((p) => p.waitFor(/continue \[y\/N\]/)));
    const refusedAt = performance.now();
    victim2.child.stdin!.end('n\n');
    // The squatter's own question is withdrawn when the victim refuses.
    const [v2, q2] = await Promise.all([victim2.exit, squatter2.exit]);
    expect([v2.code, q2.code]).toEqual([1, 1]);
    expect(victim2.stdout() + squatter2.stdout()).toBe('');
    expect(victim2.stderr()).toMatch(/not confirmed/);
    expect(squatter2.stderr()).toMatch(/party 0 did not confirm the short authentication string/);
    for (const p of [victim2, squatter2]) expect(p.stderr()).not.toMatch(/still running/);
    // Withdrawn by the refusal, not left to its own deadline; the margin is for a loaded machine.
    expect(Math.max(v2.at, q2.at) - refusedAt).toBeLessThan(15_000);
  }, 90_000);

  it("SIGINT: the interrupted party exits 130 and the other learns why (the abort's reason, not a timeout)", async () => {
    const room = `sigint-${randomBytes(4).toString('hex')}`;
    const parties = [0, 1].map((party) =>
      live(['party', '--circuit', ADDER, '--party', String(party), '--signal', signaling.url, '--room', room, '--input', '1', '--confirm']),
    );
    // Both are connected over WebRTC with the secure channel up, each waiting for its person.
    await Promise.all(parties.map((p) => p.waitFor(/continue \[y\/N\]/)));
    const t0 = performance.now();
    parties[0]!.child.kill('SIGINT');
    const [e0, e1] = await Promise.all(parties.map((p) => p.exit));
    expect(e0!.code).toBe(130);
    expect(parties[0]!.stderr()).toMatch(/webmpc party: interrupted \(SIGINT\)/);
    expect(e1!.code).toBe(1);
    expect(parties[1]!.stderr()).toMatch(/party 0 aborted the session \(ABORTED: party 0 was interrupted \(SIGINT\)\)/);
    console.log(`SIGINT: interrupted party exited after ${(e0!.at - t0).toFixed(0)} ms, the other after ${(e1!.at - t0).toFixed(0)} ms`);
    // The reason in party 1's error can only have come in party 0's abort frame. (How soon the
    // processes exit is the machine's business, not a verdict.)
  }, 60_000);

  it('pinned identities over WebRTC; a wrong pin fails both parties with exit code 1', async () => {
    const seeds = [randomBytes(32).toString('hex'), randomBytes(32).toString('hex')];
    const files = seeds.map((s, i) => {
      const f = join(scratch, `id${i}.key`);
      writeFileSync(f, `${s}\n`);
      return f;
    });
    const { importIdentitySecret, publicKeyToHex } = await import('../../dist/secure/index.js');
    const keys = await Promise.all(seeds.map(async (s) => publicKeyToHex((await importIdentitySecret(Buffer.from(s, 'hex'))).publicKey)));
    const args = (party: number, room: string, pin: string) => [
      '--circuit', ADDER, '--party', String(party), '--signal', signaling.url, '--room', room,
      '--input', party === 0 ? 'ffffffffffffffff' : '3', '--identity', files[party]!, '--peer-key', pin, '--timeout', '20000',
    ];
    const okRoom = `pin-${randomBytes(4).toString('hex')}`;
    const ok = await both((p) => args(p, okRoom, keys[1 - p]!));
    for (const r of ok) expect(r, r.stderr).toMatchObject({ code: 0, stdout: `${hex64(2n)}\n` });
    const room = `pin-${randomBytes(4).toString('hex')}`;
    const stranger = randomBytes(32).toString('hex');
    const bad = await both((p) => args(p, room, p === 1 ? stranger : keys[1]!));
    for (const r of bad) {
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
    }
    expect(bad.map((r) => r.stderr).join('')).toMatch(/AUTHENTICATION|authenticat/i);
  }, 60_000);

  it('SIGTERM during the computation: exit 143, the other party stops with the reason (not by a timeout)', async () => {
    // A circuit long enough to be mid-run when the signal comes.
    const bld = new CircuitBuilder();
    let acc = bld.input(0, 64);
    const y = bld.input(1, 64);
    for (let i = 0; i < 2000; i++) acc = acc.add(y).xor(y);
    bld.output(acc);
    const file = join(scratch, 'long.wmpc');
    writeFileSync(file, bld.build().toBinary());
    const keys = [join(scratch, 't0.key'), join(scratch, 't1.key')];
    const pubs = await Promise.all(keys.map(async (k) => (await cli(['key', k])).stdout.trim()));
    const room = `sigterm-${randomBytes(4).toString('hex')}`;
    const parties = [0, 1].map((party) =>
      live([
        'party', '--circuit', file, '--party', String(party), '--signal', signaling.url, '--room', room, '--input', '5',
        '--identity', keys[party]!, '--peer-key', pubs[1 - party]!,
      ]),
    );
    await Promise.all(parties.map((p) => p.waitFor(/authenticated \(pinned\)/)));
    await new Promise((r) => setTimeout(r, 200));
    const t0 = performance.now();
    parties[1]!.child.kill('SIGTERM');
    const [e0, e1] = await Promise.all(parties.map((p) => p.exit));
    expect(e1!.code).toBe(143);
    expect(e0!.code, parties[0]!.stderr()).toBe(1);
    expect(parties[0]!.stderr()).toMatch(/party 1 aborted the session \(ABORTED: party 1 was interrupted \(SIGTERM\)\)/);
    expect(parties[0]!.stdout()).toBe('');
    console.log(`SIGTERM: the other party exited after ${(e0!.at - t0).toFixed(0)} ms`);
    for (const p of parties) expect(p.stderr()).not.toMatch(/still running/);
  }, 60_000);

  it('webmpc key FILE creates an identity (mode 0600) once and prints its public key', async () => {
    const file = join(scratch, 'me.key');
    const first = await cli(['key', file]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^[0-9a-f]{64}\n$/);
    expect(first.stderr).toMatch(/created .*me\.key/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const { importIdentitySecret, publicKeyToHex } = await import('../../dist/secure/index.js');
    const seed = Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
    expect(first.stdout.trim()).toBe(publicKeyToHex((await importIdentitySecret(seed)).publicKey));
    const again = await cli(['key', file]);
    expect(again).toEqual({ code: 0, stdout: first.stdout, stderr: '' });
    expect((await cli(['key'])).code).toBe(2);
  });

  it('usage errors exit 2 before connecting', async () => {
    const r = await cli(['party', '--circuit', AES, '--party', '2', '--signal', signaling.url, '--room', 'x', '--input', '00']);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toMatch(/^webmpc party: --party must be 0 or 1\n$/);
    const r2 = await cli(['party', '--circuit', AES, '--party', '0', '--signal', signaling.url, '--room', 'x', '--insecure']);
    expect(r2).toMatchObject({ code: 2 });
    expect(r2.stderr).toMatch(/party 0 owns 1 input value\(s\) \(1\); 0 --input given/);
  });
});


describe('--threads and --no-worker', () => {
  /** What `session()` offers by default: the cores but one, at most 8. */
  const DEFAULT_THREADS = Math.max(1, Math.min(8, availableParallelism() - 1));
  const threads = (n: number) => `offering ${n} thread${n === 1 ? '' : 's'}`;

  it('party says once where it computes and the threads it offers; the answer is the same either way', async () => {
    const keys = [0, 1].map((p) => join(scratch, `threads${p}.key`));
    const pubs = await Promise.all(keys.map(async (k) => (await cli(['key', k])).stdout.trim()));
    const args = (p: number, extra: string[]) => [
      '--circuit', AES, '--input', p === 0 ? FIPS.key : FIPS.pt, '--identity', keys[p]!, '--peer-key', pubs[1 - p]!, ...extra,
    ];
    // Party 0 asks for 3 threads, party 1 computes on its main thread: each says its own.
    const [a0, a1] = await partiesOverWebSockets(2, `threads-${randomBytes(4).toString('hex')}`, (p) =>
      args(p, p === 0 ? ['--threads', '3'] : ['--no-worker']),
    );
    // By default: in engine workers, with the session's default number of threads.
    const [b0, b1] = await partiesOverWebSockets(2, `threads-${randomBytes(4).toString('hex')}`, (p) => args(p, []));
    for (const proc of [a0!, a1!, b0!, b1!]) {
      expect((await proc.exit).code, proc.stderr()).toBe(0);
      expect(proc.stdout()).toBe(`${FIPS.ct}\n`);
      expect(proc.stderr().match(/computing /g), proc.stderr()).toEqual(['computing ']);
    }
    expect(a0!.stderr()).toMatch(/webmpc party 0: computing in engine workers, offering 3 threads\n/);
    expect(a1!.stderr()).toMatch(/webmpc party 1: computing on the main thread \(--no-worker\), offering 1 thread\n/);
    const inWorkers = new RegExp(`computing in (an engine worker|engine workers), ${threads(DEFAULT_THREADS)}\\n`);
    for (const proc of [b0!, b1!]) expect(proc.stderr()).toMatch(inWorkers);
  }, 90_000);

  it('eval gives the same outputs with --threads 1, 4 and --no-worker (yao2pc, authgc)', async () => {
    for (const extra of [['--threads', '1'], ['--threads', '4'], ['--no-worker']]) {
      for (const protocol of ['yao2pc', 'authgc']) {
        const r = await cli(['eval', '--circuit', AES, '--protocol', protocol, '--input', `1=${FIPS.key}`, '--input', `2=${FIPS.pt}`, ...extra], 60_000);
        expect(r, `${protocol} ${extra.join(' ')}`).toEqual({ code: 0, stdout: `${FIPS.ct}\n`, stderr: '' });
      }
    }
  }, 120_000);

  it('a bad thread count is a usage error (exit 2, one line)', async () => {
    const cases: [string[], RegExp][] = [
      [['--threads', '0'], /--threads must be an integer in \[1, 64\]/],
      [['--threads', 'many'], /--threads must be an integer in \[1, 64\]/],
      [['--threads', '2', '--no-worker'], /--threads above 1 needs engine workers: drop --no-worker/],
    ];
    for (const [extra, pattern] of cases) {
      const r = await cli(['eval', '--circuit', ADDER, '--input', '1=1', '--input', '2=2', ...extra]);
      expect(r).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toMatch(/^webmpc eval: [^\n]+\n$/);
      expect(r.stderr).toMatch(pattern);
    }
  });
});
