// `webmpc enclave-server` from the command line: it prints its URL, loudly labelled as the
// simulation backend, and the measurement to pin; an SDK session runs teleport-yao against it;
// SIGTERM stops it cleanly; --print-measurement prints the program's hash; the Open Enclave
// backend refuses (exit 1) saying what it needs. And teleport-yao from `webmpc eval` and
// `webmpc party` against a simulation server: the FIPS-197 vector, and the enclave options'
// mistakes refused before anything runs.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init } from '../../dist/index.js';
import { cli, FIPS, partiesOverWebSockets } from '../cli/helpers.js';
import { DIST } from '../helpers.js';
import { CIRCUITS, circuitFile, enclaveFor, hex, pair, programMeasurement, startServer, unhex } from './helpers.js';

const CLI = `${DIST}cli.js`;

beforeAll(async () => {
  await init();
});

describe('webmpc enclave-server', () => {
  it('serves teleport-yao, labelled, and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, [CLI, 'enclave-server', '--backend', 'simulation', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d) => {
        out += d;
        const m = /listening on (ws:\/\/\S+)/.exec(out);
        if (m && /measurement [0-9a-f]{64}/.test(out)) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`exited with ${code}: ${err}`)));
    });
    expect(out).toMatch(/SIMULATION BACKEND: NOT AN ENCLAVE/);
    expect(err).toMatch(/SIMULATION BACKEND — NOT AN ENCLAVE/);
    const measurement = /measurement ([0-9a-f]{64})/.exec(out)![1]!;
    expect(measurement).toBe(programMeasurement());

    const { sessions, close } = await pair();
    const c = circuitFile('aes_128.txt');
    try {
      const enclave = enclaveFor({ url, measurement });
      const [g, e] = await Promise.all([
        sessions[0].run(c, { inputs: [unhex('000102030405060708090a0b0c0d0e0f')], protocol: 'teleport-yao', mode: 'malicious', enclave }),
        sessions[1].run(c, { inputs: [unhex('00112233445566778899aabbccddeeff')], protocol: 'teleport-yao', mode: 'malicious', enclave }),
      ]);
      expect(hex(e[0])).toBe('69c4e0d86a7b0430d8cdb78070b4c55a');
      expect(hex(g[0])).toBe('69c4e0d86a7b0430d8cdb78070b4c55a');
    } finally {
      c.free();
      await close();
    }
    const code = await new Promise<number | null>((resolve) => {
      child.once('exit', (c) => resolve(c));
      child.kill('SIGTERM');
    });
    expect(code).toBe(0);
  });

  it('prints the measurement; refuses the Open Enclave backend where it is not built; refuses bad usage', () => {
    const m = spawnSync(process.execPath, [CLI, 'enclave-server', '--backend', 'simulation', '--print-measurement'], { encoding: 'utf8' });
    expect(m.status).toBe(0);
    expect(m.stdout.trim()).toMatch(/^[0-9a-f]{64}$/);
    const oe = spawnSync(process.execPath, [CLI, 'enclave-server', '--backend', 'openenclave', '--port', '0'], { encoding: 'utf8' });
    expect(oe.status).toBe(1);
    expect(oe.stderr).toMatch(/Open Enclave SDK/);
    expect(oe.stderr).toMatch(/--program PATH --enclave-image PATH/);
    const bad = spawnSync(process.execPath, [CLI, 'enclave-server', '--backend', 'sgx'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--backend must be simulation or openenclave/);
  });
});

describe('webmpc eval and party --protocol teleport-yao', () => {
  const AES = `${CIRCUITS}/aes_128.txt`;
  let server: Awaited<ReturnType<typeof startServer>>;
  /** The enclave flags both parties pass (the simulation program pinned, and allowed). */
  let pins: string[];
  let scratch: string;
  beforeAll(async () => {
    server = await startServer();
    pins = ['--simulated-measurement', server.measurement!, '--allow-simulated-enclave'];
    scratch = mkdtempSync(join(tmpdir(), 'webmpc-teleport-cli-'));
  });
  afterAll(async () => {
    await server?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('eval: AES-128 gives the FIPS-197 vector in both modes, with either party garbling', async () => {
    for (const [mode, garbler] of [['semi-honest', '0'], ['malicious', '1']] as const) {
      const r = await cli(
        ['eval', '--protocol', 'teleport-yao', '--mode', mode, '--garbler', garbler, '--enclave', server.url, ...pins,
          '--circuit', AES, '--input', `1=${FIPS.key}`, '--input', `2=${FIPS.pt}`],
        60_000,
      );
      expect(r, r.stderr).toEqual({ code: 0, stdout: `${FIPS.ct}\n`, stderr: '' });
    }
    const j = await cli(
      ['eval', '--protocol', 'teleport-yao', '--mode', 'malicious', '--enclave', server.url, ...pins, '--circuit', AES,
        '--input', `1=${FIPS.key}`, '--input', `2=${FIPS.pt}`, '--json'],
      60_000,
    );
    expect(j.code, j.stderr).toBe(0);
    expect(JSON.parse(j.stdout)).toMatchObject({ outputs: [FIPS.ct], protocol: 'teleport-yao', andGates: 6400 });
  }, 120_000);

  it('party: two processes over WebSockets with pinned keys; the evaluator alone names the enclave; both get the FIPS-197 vector', async () => {
    const keys = [0, 1].map((p) => join(scratch, `p${p}.key`));
    const pubs = await Promise.all(keys.map(async (k) => (await cli(['key', k])).stdout.trim()));
    const [garbler, evaluator] = await partiesOverWebSockets(2, `teleport-${randomBytes(4).toString('hex')}`, (p) => [
      '--protocol', 'teleport-yao', '--mode', 'malicious', '--circuit', AES, ...pins,
      '--identity', keys[p]!, '--peer-key', pubs[1 - p]!, '--input', p === 0 ? FIPS.key : FIPS.pt,
      // Party 0 garbles (the default) and never reaches the enclave: it is given no URL.
      ...(p === 1 ? ['--enclave', server.url] : []),
    ]);
    for (const proc of [garbler!, evaluator!]) {
      expect(await proc.exit.then((e) => e.code), proc.stderr()).toBe(0);
      expect(proc.stdout()).toBe(`${FIPS.ct}\n`);
      // What was accepted is said, and where it computes (in its engine worker, like the others).
      expect(proc.stderr()).toMatch(/WARNING: --allow-simulated-enclave: the simulation backend is not an enclave/);
      expect(proc.stderr()).toMatch(/authenticated \(pinned\)/);
      expect(proc.stderr().match(/computing /g)).toEqual(['computing ']);
      expect(proc.stderr()).toMatch(/computing in (an engine worker|engine workers), offering \d+ threads?\n/);
    }
    expect(garbler!.stderr() + garbler!.stdout()).not.toContain(FIPS.pt);
    expect(evaluator!.stderr() + evaluator!.stdout()).not.toContain(FIPS.key);
  }, 120_000);

  it('mistakes exit 2 with one line before anything runs; an enclave the policy refuses fails the run (exit 1)', async () => {
    const base = ['eval', '--protocol', 'teleport-yao', '--circuit', AES, '--input', `1=${FIPS.key}`, '--input', `2=${FIPS.pt}`];
    const cases: [string[], RegExp][] = [
      [['--enclave', server.url, ...pins], /teleport-yao needs --mode semi-honest or --mode malicious/],
      [['--mode', 'covert', '--enclave', server.url, ...pins], /--mode must be semi-honest or malicious/],
      [['--mode', 'malicious', ...pins], /the evaluator of teleport-yao needs a usable --enclave/],
      [['--mode', 'malicious', '--enclave', server.url], /teleport-yao needs the enclave's measurement pinned: --measurement HEX/],
      [['--mode', 'malicious', '--enclave', server.url, '--allow-simulated-enclave'], /teleport-yao needs the enclave's measurement pinned/],
      [['--mode', 'malicious', '--enclave', server.url, '--measurement', 'ab'.repeat(32), '--allow-simulated-enclave'], /--allow-simulated-enclave needs the simulation program pinned: --simulated-measurement HEX/],
      [['--mode', 'malicious', '--enclave', server.url, '--simulated-measurement', server.measurement!], /refused without --allow-simulated-enclave/],
      [['--mode', 'malicious', '--enclave', server.url, '--simulated-measurement', 'xyz', '--allow-simulated-enclave'], /--simulated-measurement must be 64 hex digits/],
      [['--mode', 'malicious', '--enclave', 'ws://192.0.2.1:8790', ...pins], /plaintext ws:\/\/ URL to a host other than loopback: use wss:\/\/, or set --allow-plaintext-websocket/],
      [['--mode', 'malicious', '--enclave', server.url, ...pins, '--evaluator', '1'], /--evaluator applies to --protocol authgc only/],
      [['--mode', 'malicious', '--enclave', server.url, ...pins, '--parties', '3'], /teleport-yao has exactly 2 parties/],
    ];
    const results = await Promise.all(cases.map(([args]) => cli([...base, ...args])));
    results.forEach((r, i) => {
      const [args, pattern] = cases[i]!;
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(r.stderr).toMatch(/^webmpc eval: [^\n]+\n$/);
      expect(r.stderr).toMatch(pattern);
    });
    // --mode belongs to teleport-yao only.
    const yao = await cli(['eval', '--circuit', AES, '--mode', 'malicious', '--input', '1=0', '--input', '2=0']);
    expect(yao.code).toBe(2);
    expect(yao.stderr).toMatch(/^webmpc eval: --mode applies to --protocol teleport-yao only\n$/);
    // Pinning only an Open Enclave measurement refuses the simulation backend's evidence: the
    // computation fails (exit 1), naming why.
    const refused = await cli([...base, '--mode', 'malicious', '--enclave', server.url, '--measurement', server.measurement!], 60_000);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toMatch(/SIMULATED_ENCLAVE_REFUSED/);
  }, 120_000);
});
