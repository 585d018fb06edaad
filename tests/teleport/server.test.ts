// The enclave-server over WebSocket from Node: its measurement is the shipped program's hash;
// clients refuse the simulation backend unless they opt in, and evidence for another measurement
// or another signer; a program that dies mid-stream aborts both parties with typed errors at once
// (not at a deadline); a client that leaves ends its enclave program; malformed frames, too many
// sessions and an unavailable Open Enclave backend are refused clearly.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { EnclaveAbort, init, TransportError, WebmpcError } from '../../dist/index.js';
import { startEnclaveServer } from '../../dist/enclave/server.js';
import { both, circuitFile, enclaveFor, pair, PROGRAM, programMeasurement, startServer, TAG } from './helpers.js';

let server: Awaited<ReturnType<typeof startServer>>;

beforeAll(async () => {
  await init();
  server = await startServer();
});

afterAll(async () => {
  await server?.close();
});

/** One AES run with per-party enclave options; returns both outcomes. */
async function aesWith(garblerOver: object, evaluatorOver: object, target = server) {
  const { sessions, close } = await pair();
  const c = circuitFile('aes_128.txt');
  try {
    const run = (p: number, over: object) =>
      sessions[p]!.run(c, { inputs: [new Uint8Array(16)], protocol: 'teleport-yao', mode: 'malicious', enclave: enclaveFor(target, over) });
    return await both(run(0, garblerOver), run(1, evaluatorOver));
  } finally {
    c.free();
    await close();
  }
}

const reason = (r: PromiseSettledResult<unknown>) => (r as PromiseRejectedResult).reason;

describe('enclave-server (simulation backend)', () => {
  it('claims the measurement of the program it runs, and says loudly that it is no enclave', () => {
    expect(server.simulated).toBe(true);
    expect(server.measurement).toBe(programMeasurement());
    expect(execFileSync(PROGRAM, ['--print-measurement'], { encoding: 'utf8' }).trim()).toBe(programMeasurement());
    expect(server.lines.join('\n')).toMatch(/SIMULATION BACKEND — NOT AN ENCLAVE/);
    expect(server.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
  });

  it('is refused by either party unless it opts in to a simulated enclave', async () => {
    const [g1, e1] = await aesWith({ allowSimulatedEnclave: false }, {});
    expect(reason(g1)).toBeInstanceOf(EnclaveAbort);
    expect(reason(g1).code).toBe('SIMULATED_ENCLAVE_REFUSED');
    expect(e1.status).toBe('rejected');
    const [g2, e2] = await aesWith({}, { allowSimulatedEnclave: undefined });
    expect(reason(e2).code).toBe('SIMULATED_ENCLAVE_REFUSED');
    expect(g2.status).toBe('rejected');
  });

  it('refuses evidence for another measurement, or from a signer other than the pinned one', async () => {
    const other = { policy: { simulatedMeasurements: ['11'.repeat(32)] } };
    const [g, e] = await aesWith(other, {});
    expect(reason(g).code).toBe('EVIDENCE_REJECTED');
    expect(reason(g).reason).toBe('measurement-mismatch');
    expect(e.status).toBe('rejected');
    const [g2, e2] = await aesWith({}, other);
    expect(reason(e2).code).toBe('EVIDENCE_REJECTED');
    expect(g2.status).toBe('rejected');

    // A server with a fixed evidence key: pinning its signer passes, pinning another fails.
    const dir = mkdtempSync(join(tmpdir(), 'webmpc-enclave-'));
    const keyFile = join(dir, 'evidence.key');
    writeFileSync(keyFile, `${'ab'.repeat(32)}\n`);
    const keyed = await startServer({ evidenceKey: keyFile });
    try {
      expect(keyed.signer).toMatch(/^[0-9a-f]{64}$/);
      const pinned = { policy: { simulatedMeasurements: [keyed.measurement!], simulationSigners: [keyed.signer!] } };
      const [ok1, ok2] = await aesWith(pinned, pinned, keyed);
      expect([ok1.status, ok2.status]).toEqual(['fulfilled', 'fulfilled']);
      const wrong = { policy: { simulatedMeasurements: [keyed.measurement!], simulationSigners: ['22'.repeat(32)] } };
      const [bad] = await aesWith(wrong, pinned, keyed);
      expect(reason(bad).code).toBe('EVIDENCE_REJECTED');
      expect(reason(bad).reason).toBe('signer-mismatch');
    } finally {
      await keyed.close();
    }
  });

  it("pins a simulated enclave only by policy.simulatedMeasurements: its hash pinned as an Open Enclave measurement is refused", async () => {
    // Anyone can sign simulated evidence claiming any measurement, so allowing simulation must
    // never let a simulated claim match an Open Enclave (MRENCLAVE) pin.
    const oeOnly = { policy: { measurements: [server.measurement!], simulatedMeasurements: ['44'.repeat(32)] }, allowSimulatedEnclave: true };
    for (const [g, e] of [await aesWith(oeOnly, {}), await aesWith({}, oeOnly)]) {
      const refused = [g, e].find((r) => r.status === 'rejected' && reason(r).code === 'EVIDENCE_REJECTED');
      expect(refused, 'one party refuses the evidence').toBeDefined();
      expect(reason(refused!).reason).toBe('measurement-mismatch');
      expect([g.status, e.status]).toEqual(['rejected', 'rejected']);
    }
    // Allowing simulation without pinning the program is refused before anything is sent.
    const [g, e] = await aesWith({ policy: { measurements: [server.measurement!] } }, {});
    expect(reason(g).code).toBe('INVALID_ARGUMENT');
    expect(reason(g).message).toMatch(/simulatedMeasurements/);
    expect(e.status).toBe('rejected');
  });

  it('a program that dies mid-stream aborts both parties with typed errors, well before any deadline', async () => {
    // On this thread: the program is killed from a progress report in the middle of evaluating,
    // and an engine worker's reports arrive after the fact (it may have finished by then).
    const { sessions, close } = await pair(60_000, { worker: false });
    const c = circuitFile('sha256.txt');
    const enclave = enclaveFor(server, { recvTimeoutMs: 60_000 });
    let killed = false;
    const before = new Set(server.sessions().map((s) => s.pid));
    try {
      const t0 = Date.now();
      const [g, e] = await both(
        sessions[0].run(c, { inputs: [new Uint8Array(64)], protocol: 'teleport-yao', mode: 'malicious', enclave }),
        sessions[1].run(c, {
          inputs: [new Uint8Array(32)],
          protocol: 'teleport-yao',
          mode: 'malicious',
          enclave,
          onProgress: (q) => {
            if (!killed && q.phase === 'evaluating' && q.gatesDone > 0) {
              killed = true;
              const mine = server.sessions().find((s) => !before.has(s.pid));
              process.kill(mine!.pid!, 'SIGKILL');
            }
          },
        }),
      );
      const elapsed = Date.now() - t0;
      expect(killed).toBe(true);
      expect(reason(e)).toBeInstanceOf(EnclaveAbort);
      expect(reason(e).code).toBe('ENCLAVE_FAILED');
      expect(reason(e).enclaveCode).toBe('ENCLAVE_PROGRAM_EXITED');
      expect(reason(e).message).toMatch(/SIGKILL|enclave/);
      expect(reason(g)).toBeInstanceOf(WebmpcError);
      expect(['PEER_DISCONNECTED', 'CLOSED', 'ENCLAVE_FAILED']).toContain(reason(g).code);
      expect(elapsed).toBeLessThan(10_000);
    } finally {
      c.free();
      await close();
    }
  });

  it('a client that leaves ends its enclave program; a client that breaks the framing is cut off', async () => {
    const count = () => server.sessions().length;
    const base = count();
    const ws = new WebSocket(server.url);
    await new Promise((r) => ws.once('open', r));
    // Nothing comes before the session's challenge (the two verifiers' nonces, from the
    // evaluator); then the enclave's evidence, to the garbler (peer 0) and the evaluator.
    const first = new Promise<Buffer>((resolve, reject) => {
      ws.once('message', (d: Buffer) => resolve(Buffer.from(d)));
      ws.once('error', reject);
    });
    ws.send(Buffer.concat([Buffer.from([1, 0x08]), Buffer.alloc(64, 7)]));
    expect((await first).subarray(0, 2)).toEqual(Buffer.from([0, 0x81]));
    expect(count()).toBe(base + 1);
    ws.close();
    for (let i = 0; i < 100 && count() > base; i++) await new Promise((r) => setTimeout(r, 20));
    expect(count()).toBe(base);

    const bad = new WebSocket(server.url);
    await new Promise((r) => bad.once('open', r));
    const closed = new Promise<number>((r) => bad.once('close', (code: number) => r(code)));
    bad.send(Buffer.from([7, 1, 2, 3])); // peer byte 7 does not exist
    expect(await closed).toBe(1008);
    for (let i = 0; i < 100 && count() > base; i++) await new Promise((r) => setTimeout(r, 20));
    expect(count()).toBe(base);
  });

  it('refuses sessions beyond its maximum with ENCLAVE_BUSY', async () => {
    const small = await startServer({ maxSessions: 1 });
    try {
      const a = new WebSocket(small.url);
      await new Promise((r) => a.once('open', r));
      for (let i = 0; i < 100 && small.sessions().length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      const b = new WebSocket(small.url);
      const frames: Buffer[] = [];
      b.on('message', (d: Buffer) => frames.push(Buffer.from(d)));
      const code = await new Promise<number>((r) => b.once('close', (c: number) => r(c)));
      expect(code).toBe(1013);
      expect(frames[0]![1]).toBe(TAG.ERROR);
      expect(frames[0]!.subarray(6, 6 + 12).toString('ascii')).toBe('ENCLAVE_BUSY');
      a.close();
    } finally {
      await small.close();
    }
  });

  it('the Open Enclave backend refuses clearly where its host part is not built or SGX is absent', async () => {
    for (const opts of [{}, { program: PROGRAM, enclaveImage: '/nonexistent/webmpc_enclave.signed' }]) {
      const err = await startEnclaveServer({ backend: 'openenclave', port: 0, log: () => {}, ...opts }).catch((e) => e);
      expect(err).toBeInstanceOf(WebmpcError);
      expect(err.code).toBe('ENCLAVE_UNAVAILABLE');
      expect(err.message).toMatch(/Open Enclave SDK/);
    }
    const err = await startEnclaveServer({ backend: 'simulation', port: 0, program: '/nonexistent/program', log: () => {} }).catch((e) => e);
    expect(err.code).toBe('ENCLAVE_UNAVAILABLE');
    const bad = await startEnclaveServer({ backend: 'nope' as never }).catch((e) => e);
    expect(bad.code).toBe('INVALID_ARGUMENT');
  });

  it('an unreachable server is ENCLAVE_UNAVAILABLE for the evaluator; the garbler aborts too', async () => {
    const [g, e] = await aesWith({}, { url: 'ws://127.0.0.1:1' });
    expect(reason(e).code).toBe('ENCLAVE_UNAVAILABLE');
    expect(reason(g)).toBeInstanceOf(TransportError);
  });
});
