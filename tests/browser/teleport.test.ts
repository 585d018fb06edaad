// teleport-yao and teleported ROT in Chromium against the enclave-server started here in Node:
// the evaluator in the page reaches the server with the browser's own WebSocket. In one page,
// both parties (in-memory transports) run AES-128 (the SDK's builder circuit) in both modes and
// 10,000 teleported ROTs, and a page that does not opt in refuses the simulated enclave. Across
// runtimes, a Chromium garbler (which needs no access to the server at all) and a Node evaluator
// run AES-128 over WebRTC.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { circuit as circuits, init, session } from '../../dist/index.js';
import * as net from '../../dist/net/node.js';
import { startEnclaveServer, type EnclaveServer } from '../../dist/enclave/server.js';
import { skipBrowserTests } from './chromium.js';
import { openSdkPages, type SdkPages } from './sdk-page.js';

const KEY = '000102030405060708090a0b0c0d0e0f';
const PT = '00112233445566778899aabbccddeeff';
const CT = '69c4e0d86a7b0430d8cdb78070b4c55a';

describe.skipIf(skipBrowserTests())('teleport in Chromium', () => {
  let env: SdkPages;
  let server: EnclaveServer;

  beforeAll(async () => {
    await init();
    env = await openSdkPages('webmpc teleport');
    // The page's origin must be on the server's allow-list: by default no web page may drive it.
    server = await startEnclaveServer({ backend: 'simulation', port: 0, log: () => {}, allowedOrigins: [new URL(env.server.url).origin] });
  }, 120_000);

  afterAll(async () => {
    await env?.close();
    await server?.close();
  });

  it('both parties in the page: AES-128 in both modes, teleported ROTs, and the refusal without the opt-in', async () => {
    const r = await env.pages[0].evaluate(
      async ({ url, measurement, KEY, PT }) => {
        const fromHex = (s: string) => Uint8Array.from(s.match(/../g)!, (h) => parseInt(h, 16));
        const toHex = (b: Uint8Array | undefined) => (b ? Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('') : null);
        const { webmpc } = window.sdk;
        const enclave = { url, policy: { simulatedMeasurements: [measurement] }, allowSimulatedEnclave: true };
        const aes = webmpc.circuit.aes128Circuit();
        const out: Record<string, unknown> = {};
        for (const mode of ['semi-honest', 'malicious'] as const) {
          const [a, b] = webmpc.createMemoryTransports(2, { recvTimeoutMs: 20_000 });
          const res = await Promise.all(
            [a!, b!].map(async (t, p) => {
              const s = await webmpc.session({ transport: t, party: p, parties: 2 });
              const first = await s.run(aes, { inputs: [fromHex(p === 0 ? KEY : PT)], protocol: 'teleport-yao', mode, enclave });
              const second = await s.run(aes, { inputs: [fromHex(p === 0 ? KEY : PT)], protocol: 'teleport-yao', mode, enclave });
              await s.close();
              return [toHex(first[0]), toHex(second[0])];
            }),
          );
          out[mode] = res;
        }
        {
          const [a, b] = webmpc.createMemoryTransports(2, { recvTimeoutMs: 20_000 });
          const sessionId = crypto.getRandomValues(new Uint8Array(32));
          const n = 10_000;
          const [sent, got] = await Promise.all([
            webmpc.teleportedRandomOt({ transport: a!, peer: 1, sessionId, role: 'sender', count: n, enclave, mode: 'malicious' }),
            webmpc.teleportedRandomOt({ transport: b!, peer: 0, sessionId, role: 'receiver', count: n, enclave, mode: 'malicious' }),
          ]);
          let wrong = 0;
          for (let j = 0; j < n; j++) {
            const want = (got.choices[j] ? sent.m1 : sent.m0).subarray(16 * j, 16 * j + 16);
            if (toHex(want) !== toHex(got.messages.subarray(16 * j, 16 * j + 16))) wrong++;
          }
          out.rot = { n, wrong, ones: got.choices.reduce((x, c) => x + c, 0) };
          await Promise.all([a!.close(), b!.close()]);
        }
        {
          const [a, b] = webmpc.createMemoryTransports(2, { recvTimeoutMs: 20_000 });
          const codes = await Promise.all(
            [a!, b!].map(async (t, p) => {
              const s = await webmpc.session({ transport: t, party: p, parties: 2 });
              const e = { ...enclave, allowSimulatedEnclave: p === 0 };
              try {
                await s.run(aes, { inputs: [new Uint8Array(16)], protocol: 'teleport-yao', mode: 'malicious', enclave: e });
                return 'ok';
              } catch (err) {
                return (err as { code?: string }).code;
              } finally {
                await s.close();
              }
            }),
          );
          out.refusal = codes;
        }
        return out;
      },
      { url: server.url, measurement: server.measurement!, KEY, PT },
    );
    expect(r['semi-honest']).toEqual([
      [CT, CT],
      [CT, CT],
    ]);
    expect(r.malicious).toEqual([
      [CT, CT],
      [CT, CT],
    ]);
    const rot = r.rot as { n: number; wrong: number; ones: number };
    expect(rot.wrong).toBe(0);
    expect(rot.ones).toBeGreaterThan(4500);
    expect(rot.ones).toBeLessThan(5500);
    const refusal = r.refusal as string[];
    expect(refusal[1]).toBe('SIMULATED_ENCLAVE_REFUSED');
    expect(refusal[0]).not.toBe('ok');
    expect(env.browser.problems).toEqual([]);
  });

  it('a Chromium garbler and a Node evaluator over WebRTC: the browser sends labels, not tables', async () => {
    const room = `teleport-${randomBytes(6).toString('hex')}`;
    const enclave = { url: server.url, WebSocket: await net.nodeWebSocket(), policy: { simulatedMeasurements: [server.measurement!] }, allowSimulatedEnclave: true };
    const inPage = env.pages[1].evaluate(
      async ({ signalingUrl, room, measurement, KEY }) => {
        const fromHex = (s: string) => Uint8Array.from(s.match(/../g)!, (h) => parseInt(h, 16));
        const toHex = (b: Uint8Array | undefined) => (b ? Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('') : null);
        const { webmpc, net } = window.sdk;
        const transport = await net.connectMesh({ signalingUrl, room, party: 0, parties: 2, connectTimeoutMs: 30_000 });
        try {
          const s = await webmpc.session({ transport, party: 0, parties: 2 });
          // The garbler needs only the policy: it never contacts the enclave-server.
          const enclave = { policy: { simulatedMeasurements: [measurement] }, allowSimulatedEnclave: true };
          const aes = webmpc.circuit.aes128Circuit();
          const out = await s.run(aes, { inputs: [fromHex(KEY)], protocol: 'teleport-yao', mode: 'semi-honest', enclave });
          const bytes = s.bytesSent;
          await s.close();
          return { ok: true as const, out: toHex(out[0]), bytes };
        } catch (e) {
          await transport.close();
          return { ok: false as const, code: (e as { code?: string }).code, message: String((e as Error).message) };
        }
      },
      { signalingUrl: env.signaling.url, room, measurement: server.measurement!, KEY },
    );
    const transport = await net.connectNodeMesh({ signalingUrl: env.signaling.url, room, party: 1, parties: 2, connectTimeoutMs: 30_000 });
    const s = await session({ transport, party: 1, parties: 2 });
    const aes = circuits.aes128Circuit();
    const mine = await s.run(aes, { inputs: [Uint8Array.from(Buffer.from(PT, 'hex'))], protocol: 'teleport-yao', mode: 'semi-honest', enclave });
    const theirs = await inPage;
    await s.close();
    expect(Buffer.from(mine[0]!).toString('hex')).toBe(CT);
    expect(theirs).toMatchObject({ ok: true, out: CT });
    // The garbler's whole session (session id, parameter record, job, sealed seed, 256 labels):
    // a few KB, where yao2pc's garbler sends ~200 KB of tables for AES.
    expect((theirs as { bytes: number }).bytes).toBeLessThan(12_000);
  });
});
