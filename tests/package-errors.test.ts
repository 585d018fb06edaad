// Errors a new user meets first, with the context to act on them: a Wasm URL that answers with
// an HTML page or an HTTP error, a room name the server would refuse, a signaling server that is
// not there, parties that never join, a seat already taken. Each message is checked for what it
// must name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { init, isReady, WebmpcError } from '../dist/index.js';
import { connectMesh } from '../dist/net/index.js';
import { connectNodeMesh, connectNodeRelay, startSignalingServer, type SignalingServer } from '../dist/net/node.js';

async function failure(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    const t = await p;
    await (t as { close?: () => Promise<void> })?.close?.();
  } catch (e) {
    expect(e).toBeInstanceOf(WebmpcError);
    return { code: (e as WebmpcError).code, message: (e as Error).message };
  }
  throw new Error('expected a failure');
}

describe('init: what came instead of the Wasm module', () => {
  let http: Server;
  let base: string;

  beforeAll(async () => {
    // An app server with a catch-all route: every unknown path gets the app's HTML page.
    http = createServer((req, res) => {
      if (req.url === '/gone.wasm') res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      else res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><html><body>app</body></html>');
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise<void>((resolve) => http.close(() => resolve())));

  it('an HTML page from the URL: "got HTML, not Wasm, from <url>", pointing at init({ wasm })', async () => {
    const f = await failure(init({ wasm: `${base}/assets/webmpc_bg.wasm` }));
    expect(f.code).toBe('WASM_LOAD_FAILED');
    expect(f.message).toContain(`got HTML, not Wasm, from ${base}/assets/webmpc_bg.wasm`);
    expect(f.message).toContain('init({ wasm })');
  });

  it('an HTTP error: its status and the URL', async () => {
    const f = await failure(init({ wasm: new URL(`${base}/gone.wasm`) }));
    expect(f.message).toContain(`HTTP 404 from ${base}/gone.wasm`);
  });

  it('bytes that are HTML, or not Wasm at all', async () => {
    expect((await failure(init({ wasm: new TextEncoder().encode('<!DOCTYPE html><html>') }))).message).toContain('got HTML, not Wasm');
    expect((await failure(init({ wasm: new Uint8Array([1, 2, 3, 4, 5]) }))).message).toContain('not a Wasm module');
    // None of these loaded anything; the default location still works afterwards.
    expect(isReady()).toBe(false);
    await init();
    expect(isReady()).toBe(true);
  });
});

describe('connecting: which server, which room, which party', () => {
  let server: SignalingServer;

  beforeAll(async () => {
    server = await startSignalingServer({ port: 0, relay: true });
  });
  afterAll(() => server?.close());

  it('a room name is checked before connecting, with the rule it breaks', async () => {
    const cases: [unknown, RegExp][] = [
      ['my room', /room "my room" contains " " at position 2/],
      ['', /room is empty/],
      ['x'.repeat(129), /has 129 characters \(at most 128\)/],
      ['été', /contains "é" at position 0/],
    ];
    for (const [room, want] of cases) {
      const f = await failure(connectMesh({ signalingUrl: server.url, room: room as string, party: 0, parties: 2 }));
      expect(f.code).toBe('INVALID_ARGUMENT');
      expect(f.message).toMatch(want);
      expect(f.message).toContain("1 to 128 characters, each a letter, digit, '_', '.' or '-'");
    }
    const relay = await failure(connectNodeRelay({ url: `${server.url}/relay`, room: 'a/b', party: 0, parties: 2 }));
    expect(relay.message).toMatch(/room "a\/b" contains "\/"/);
  });

  it('no signaling server there: the URL, the room and the seat', async () => {
    const f = await failure(connectNodeMesh({ signalingUrl: 'ws://127.0.0.1:9', room: 'r1', party: 1, parties: 3, connectTimeoutMs: 5_000 }));
    expect(f.code).toBe('SIGNALING_FAILED');
    expect(f.message).toContain("could not connect to the signaling server ws://127.0.0.1:9 (room 'r1', party 1 of 3)");
  });

  it('a mesh that does not come up names the parties that never joined', async () => {
    const room = `absent-${Date.now()}`;
    const opts = { signalingUrl: server.url, room, parties: 3, connectTimeoutMs: 4_000 };
    // Parties 0 and 1 come; party 2 never does.
    const [f0, f1] = await Promise.all([failure(connectNodeMesh({ ...opts, party: 0 })), failure(connectNodeMesh({ ...opts, party: 1 }))]);
    for (const [f, party] of [[f0, 0], [f1, 1]] as const) {
      expect(f.code).toBe('TIMEOUT');
      // Exactly this: parties 0 and 1 did connect to each other, so only party 2 is named.
      expect(f.message).toBe(`WebRTC mesh of party ${party} not up within 4000 ms: party 2 never joined room '${room}' on ${server.url}`);
    }
  });

  it('the relay names the parties that never joined', async () => {
    const f = await failure(connectNodeRelay({ url: `${server.url}/relay`, room: 'lonely', party: 2, parties: 3, connectTimeoutMs: 1_000 }));
    expect(f.code).toBe('TIMEOUT');
    expect(f.message).toBe(`relay room 'lonely' on ${server.url}/relay not complete within 1000 ms: parties 0, 1 never joined`);
  });

  it("a refusal says what the server's reason means", async () => {
    const room = `taken-${Date.now()}`;
    const first = connectNodeMesh({ signalingUrl: server.url, room, party: 0, parties: 2, connectTimeoutMs: 3_000 });
    // Let the first client take seat 0, then a second asks for the same seat.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const f = await failure(connectNodeMesh({ signalingUrl: server.url, room, party: 0, parties: 2, connectTimeoutMs: 3_000 }));
    expect(f.code).toBe('SIGNALING_FAILED');
    expect(f.message).toContain(`the signaling server ${server.url} (room '${room}', party 0 of 2) refused: duplicate-party`);
    expect(f.message).toContain('another client already holds this party index in the room');
    await failure(first);
  });
});
