// The enclave-server under a hostile client (issue 17, item 10): browser origins off its
// allow-list are refused before an enclave program starts; one client (one address) cannot take
// every session, so a fair client is served while it floods; each job is bounded by what the
// server allows (gates, ROTs, memory); and `teleport-yao` says plainly what the simulation
// backend's host can read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { init } from '../../dist/index.js';
import { protocols } from '../../dist/protocols/index.js';
import { both, circuitFile, enclaveFor, pair, startServer } from './helpers.js';

beforeAll(async () => {
  await init();
});

/** Opens a raw connection; resolves 'open', or the HTTP status / close code it was refused with. */
function attempt(url: string, options: { origin?: string; localAddress?: string } = {}) {
  return new Promise<{ outcome: 'open' | number; ws: WebSocket; frames: Buffer[] }>((resolve) => {
    const ws = new WebSocket(url, options);
    const frames: Buffer[] = [];
    let timer: ReturnType<typeof setTimeout> | undefined;
    ws.on('message', (d: Buffer) => frames.push(Buffer.from(d)));
    ws.once('open', () => {
      // A refused session is closed at once (1013); an accepted one stays open.
      timer = setTimeout(() => resolve({ outcome: 'open', ws, frames }), 400);
    });
    ws.once('close', (code: number) => {
      clearTimeout(timer);
      resolve({ outcome: code, ws, frames });
    });
    ws.once('unexpected-response', (_req, res) => {
      resolve({ outcome: res.statusCode ?? 0, ws, frames });
      ws.terminate();
    });
    ws.on('error', () => {});
  });
}

describe('enclave-server limits', () => {
  let servers: Awaited<ReturnType<typeof startServer>>[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });
  const start = async (o: Parameters<typeof startServer>[0]) => {
    const s = await startServer(o);
    servers.push(s);
    return s;
  };

  it('refuses browser origins off its allow-list before starting a program; clients without Origin are served', async () => {
    const listed = await start({ allowedOrigins: ['https://app.example'] });
    const evil = await attempt(listed.url, { origin: 'https://evil.example' });
    expect(evil.outcome).toBe(403);
    expect(listed.sessions()).toHaveLength(0);
    const ok = await attempt(listed.url, { origin: 'https://app.example' });
    expect(ok.outcome).toBe('open');
    const node = await attempt(listed.url);
    expect(node.outcome).toBe('open');
    ok.ws.close();
    node.ws.close();
    // By default no web page may drive the server (any page the user visits could otherwise
    // reach ws://127.0.0.1:8790): browsers must be listed.
    const dflt = await start({});
    expect((await attempt(dflt.url, { origin: 'http://localhost:5173' })).outcome).toBe(403);
    const plain = await attempt(dflt.url);
    expect(plain.outcome).toBe('open');
    plain.ws.close();
  });

  it('one client cannot take every session: a flood from one address is capped while another client is served', { timeout: 120_000 }, async () => {
    const s = await start({ maxSessions: 6, maxSessionsPerClient: 2 });
    // The flooder (127.0.0.1) plays both parties itself: the enclave garbles SHA-256 for it again
    // and again from seeds it sealed itself, and it opens more connections on top.
    const flood = await pair(60_000);
    const sha = circuitFile('sha256.txt');
    const enclave = enclaveFor(s, { recvTimeoutMs: 60_000 });
    let stop = false;
    let jobs = 0;
    const flooding = (async () => {
      while (!stop) {
        await Promise.all(
          flood.sessions.map((x, p) => x.run(sha, { inputs: [new Uint8Array(p === 0 ? 64 : 32)], protocol: 'teleport-yao', mode: 'malicious', enclave })),
        );
        jobs++;
      }
    })();
    try {
      for (let i = 0; i < 100 && jobs === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(jobs).toBeGreaterThan(0);
      const raw = [];
      for (let i = 0; i < 6; i++) raw.push(await attempt(s.url, { localAddress: '127.0.0.1' }));
      const accepted = raw.filter((r) => r.outcome === 'open');
      const busy = raw.filter((r) => r.outcome === 1013);
      expect(accepted).toHaveLength(1);
      expect(busy).toHaveLength(5);
      expect(busy[0]!.frames[0]!.subarray(6, 18).toString('ascii')).toBe('ENCLAVE_BUSY');
      // A fair client from another address is served while the flood goes on.
      class FromOtherAddress extends WebSocket {
        constructor(url: string) {
          super(url, { localAddress: '127.0.0.2' });
        }
      }
      const fair = await pair(60_000);
      const aes = circuitFile('aes_128.txt');
      try {
        const fairEnclave = enclaveFor(s, { WebSocket: FromOtherAddress as never, recvTimeoutMs: 60_000 });
        const jobsBefore = jobs;
        const [g, e] = await both(
          fair.sessions[0].run(aes, { inputs: [new Uint8Array(16)], protocol: 'teleport-yao', mode: 'malicious', enclave: fairEnclave }),
          fair.sessions[1].run(aes, { inputs: [new Uint8Array(16)], protocol: 'teleport-yao', mode: 'malicious', enclave: fairEnclave }),
        );
        expect(e.status, String((e as PromiseRejectedResult).reason)).toBe('fulfilled');
        expect(g.status).toBe('fulfilled');
        expect(Buffer.from((e as PromiseFulfilledResult<Uint8Array[]>).value[0]!).toString('hex')).toBe('66e94bd4ef8a2c3b884cfa59ca342b2e');
        // The flood was still running meanwhile.
        for (let i = 0; i < 200 && jobs === jobsBefore; i++) await new Promise((r) => setTimeout(r, 50));
        expect(jobs).toBeGreaterThan(jobsBefore);
      } finally {
        aes.free();
        await fair.close();
      }
      for (const r of accepted) r.ws.close();
    } finally {
      stop = true;
      await flooding.catch(() => {});
      sha.free();
      await flood.close();
    }
  });

  it('bounds each job by what the server allows: gates, then memory', async () => {
    for (const [limit, what] of [
      [{ maxGates: 10_000 }, /gates/],
      [{ maxMemory: 1 << 20 }, /memory/],
    ] as const) {
      const s = await start(limit);
      const { sessions, close } = await pair();
      const c = circuitFile('aes_128.txt');
      try {
        const enclave = enclaveFor(s);
        const [, e] = await both(
          sessions[0].run(c, { inputs: [new Uint8Array(16)], protocol: 'teleport-yao', mode: 'malicious', enclave }),
          sessions[1].run(c, { inputs: [new Uint8Array(16)], protocol: 'teleport-yao', mode: 'malicious', enclave }),
        );
        const err = (e as PromiseRejectedResult).reason;
        expect(err?.code).toBe('ENCLAVE_FAILED');
        expect(err.enclaveCode).toBe('TOO_LARGE');
        expect(err.message).toMatch(what);
      } finally {
        c.free();
        await close();
      }
    }
  });
});

describe('teleport-yao protects', () => {
  it("says plainly that with the simulation backend the evaluator's host can read the garbler's seed", () => {
    const p = protocols['teleport-yao'].protects;
    expect(p).toMatch(/simulation backend/);
    expect(p).toMatch(/evaluator's host can read the garbler's seed/);
  });
});
