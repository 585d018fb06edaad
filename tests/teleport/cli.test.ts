// `webmpc enclave-server` from the command line: it prints its URL, loudly labelled as the
// simulation backend, and the measurement to pin; an SDK session runs teleport-yao against it;
// SIGTERM stops it cleanly; --print-measurement prints the program's hash; the Open Enclave
// backend refuses (exit 1) saying what it needs.
import { spawn, spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from '../../dist/index.js';
import { DIST } from '../helpers.js';
import { circuitFile, enclaveFor, hex, pair, programMeasurement, unhex } from './helpers.js';

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
