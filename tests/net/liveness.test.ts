// A party that goes away is noticed in time, and a party that fails leaves nothing running
// (issue 10): with default settings a SIGKILLed peer is noticed within ~4 s (heartbeat: 1 s
// keepalives, 3 s silence); a party process that closes its transport after a local failure
// exits by itself within 2 s (no timer, socket or peer connection left), and its peer learns why
// within a second.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as net from '../../dist/net/node.js';
import { generateIdentity, secureTransport } from '../../dist/secure/index.js';
import { rejection, roomId } from './helpers.js';

const PARTY = fileURLToPath(new URL('./fixtures/party.mjs', import.meta.url));
const FAIL = fileURLToPath(new URL('./fixtures/fail-and-exit.mjs', import.meta.url));

/** Resolves with the time (performance.now) at which the child printed `line`. */
function printed(child: ChildProcess, line: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.split('\n').includes(line)) resolve(performance.now());
    });
    child.once('exit', () => reject(new Error(`child exited before printing ${line}: ${out}`)));
  });
}

function exitedAt(child: ChildProcess): Promise<{ at: number; code: number | null }> {
  return new Promise((resolve) => child.once('exit', (code) => resolve({ at: performance.now(), code })));
}

describe('a killed peer, default settings', () => {
  it.each(['webrtc', 'websocket'] as const)('%s: SIGKILL noticed within ~4 s (PEER_DISCONNECTED)', async (kind) => {
    const server = kind === 'webrtc' ? await net.startSignalingServer() : undefined;
    const listener = kind === 'websocket' ? await net.listenWebSocket() : undefined;
    const room = roomId();
    // The child streams to us; no timing options anywhere: the defaults are under test.
    const childConfig =
      kind === 'webrtc'
        ? { signalingUrl: server!.url, room, party: 1, parties: 2, target: 0 }
        : { party: 0, parties: 2, session: room, peers: [undefined, listener!.url], target: 1 };
    const child = spawn(process.execPath, [PARTY, kind, JSON.stringify(childConfig)], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const ours =
        kind === 'webrtc'
          ? await net.connectNodeMesh({ signalingUrl: server!.url, room, party: 0, parties: 2 })
          : await net.connectWebSocketMesh({ party: 1, parties: 2, session: room, peers: [], listener: listener! });
      const childParty = kind === 'webrtc' ? 1 : 0;
      await ours.recv(childParty, { timeoutMs: 20_000 });
      const drain = async () => {
        for (;;) await ours.recv(childParty, { timeoutMs: 30_000 });
      };
      const pending = rejection(drain());
      const t0 = performance.now();
      child.kill('SIGKILL');
      const { error } = await pending;
      const ms = performance.now() - t0;
      console.log(`${kind}: SIGKILL noticed after ${ms.toFixed(0)} ms`);
      expect(error.code).toBe('PEER_DISCONNECTED');
      expect(error.peer).toBe(childParty);
      // WebRTC: only the heartbeat can tell (nothing is sent on a kill); TCP may be quicker.
      // PEER_DISCONNECTED already rules out the recv's 30 s deadline (that is TIMEOUT).
      await ours.close();
    } finally {
      child.kill('SIGKILL');
      await server?.close();
      await listener?.close();
    }
  }, 60_000);
});

describe('a party that fails locally (child process) tells its peer and exits by itself', () => {
  const cases = (['webrtc', 'websocket', 'relay'] as const).flatMap((kind) => (['plain', 'secure'] as const).map((wrap) => [kind, wrap] as const));
  it.each(cases)('%s (%s): the peer learns why within 1 s; the process exits within 2 s', async (kind, wrap) => {
    const server = kind === 'websocket' ? undefined : await net.startSignalingServer({ relay: kind === 'relay' });
    const listener = kind === 'websocket' ? await net.listenWebSocket() : undefined;
    const room = roomId();
    const childConfig =
      kind === 'webrtc'
        ? { signalingUrl: server!.url, room, party: 0, parties: 2 }
        : kind === 'relay'
          ? { url: `${server!.url}/relay`, room, party: 0, parties: 2 }
          : { party: 0, parties: 2, session: room, peers: [undefined, listener!.url] };
    const child = spawn(process.execPath, [FAIL, kind, JSON.stringify(childConfig), wrap], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = exitedAt(child);
    const closed = printed(child, 'closed');
    try {
      let ours: net.Transport =
        kind === 'webrtc'
          ? await net.connectNodeMesh({ signalingUrl: server!.url, room, party: 1, parties: 2 })
          : kind === 'relay'
            ? await net.connectNodeRelay({ url: `${server!.url}/relay`, room, party: 1, parties: 2 })
            : await net.connectWebSocketMesh({ party: 1, parties: 2, session: room, peers: [], listener: listener! });
      if (wrap === 'secure') {
        ours = await secureTransport(ours, { identity: await generateIdentity(), sessionId: 'exit', trust: 'tofu' });
      }
      expect(Array.from(await ours.recv(0, { timeoutMs: 20_000 }))).toEqual([1]);
      const pending = rejection(ours.recv(0, { timeoutMs: 30_000 }));
      const { error, ms } = await pending;
      expect(error).toMatchObject({ code: 'PEER_DISCONNECTED', peer: 0, remote: { code: 'INVALID_ARGUMENT', message: 'input 2 has the wrong length' } });
      // The remote cause above can only have come in the child's abort frame: the news travelled
      // as a message, not by the heartbeat or the recv's deadline.
      console.log(`${kind} ${wrap}: the abort arrived ${ms.toFixed(0)} ms after the recv began (the child waits 100 ms)`);
      const closedAt = await closed;
      const { at, code } = await exited;
      console.log(`${kind} ${wrap}: exited ${(at - closedAt).toFixed(0)} ms after close() resolved`);
      expect(code).toBe(0);
      expect(at - closedAt).toBeLessThan(2_000);
      await ours.close();
    } finally {
      child.kill('SIGKILL');
      await server?.close();
      await listener?.close();
    }
  }, 60_000);
});
