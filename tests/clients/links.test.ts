// A client's WebSocket link (listenForClients / dialServer) outlives a silence that would end a
// link between parties (3 s): a client waits out the window and the computing, often from a
// throttled page. A client that really goes away still ends its link at once (the socket closes).
import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import type { Transport } from '../../dist/net/transport.js';
import { listenForClients } from '../../dist/net/node.js';

describe('client links', () => {
  it('a silent client is not dropped after the party links’ 3 s; one whose socket closes is, at once', async () => {
    const listener = await listenForClients({ port: 0 });
    const accepted: Transport[] = [];
    listener.listen((t) => accepted.push(t));
    // A raw socket that never sends a frame (not even a keepalive): only its liveness can end it.
    const silent = new WebSocket(listener.url);
    await new Promise((resolve, reject) => {
      silent.once('open', resolve);
      silent.once('error', reject);
    });
    while (accepted.length === 0) await new Promise((r) => setTimeout(r, 10));
    const link = accepted[0]!;
    let ended = false;
    void link.closed.then(() => (ended = true));
    await new Promise((r) => setTimeout(r, 4_000));
    expect(ended).toBe(false);
    silent.terminate();
    await expect(Promise.race([link.closed.then(() => 'closed'), new Promise((r) => setTimeout(() => r('still open'), 2_000))])).resolves.toBe('closed');
    await listener.close();
  }, 15_000);
});
