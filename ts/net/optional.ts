/**
 * The optional peer dependencies of the Node transports, loaded on first use.
 *
 * `ws` (WebSockets and the signaling server) and `node-datachannel` (WebRTC in Node, an 8.7 MB
 * native module) are optional peer dependencies, so a browser app installing webmpc gets neither.
 * A Node app that uses a transport needing one and has not installed it gets a
 * `MISSING_DEPENDENCY` error that names the package and the command to install it, instead of
 * Node's bare "Cannot find package".
 */
import { WebmpcError } from '../errors.js';
import type { WebSocketConstructor } from './websocket-like.js';

type Ws = typeof import('ws');
type Polyfill = typeof import('node-datachannel/polyfill');

let ws: Promise<Ws> | undefined;
let polyfill: Promise<Polyfill> | undefined;

function missing(pkg: string, feature: string, err: unknown): WebmpcError {
  return new WebmpcError(
    'MISSING_DEPENDENCY',
    `webmpc: ${feature} needs the package '${pkg}', which is not installed: run \`npm install ${pkg}\``,
    { cause: err },
  );
}

/** Whether `err` says that `pkg` itself (not something it imports) could not be found. */
function isNotFound(err: unknown, pkg: string): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  return (
    (e?.code === 'ERR_MODULE_NOT_FOUND' || e?.code === 'MODULE_NOT_FOUND') &&
    typeof e.message === 'string' &&
    e.message.includes(`'${pkg}`)
  );
}

async function load<T>(pkg: string, feature: string, importer: () => Promise<T>): Promise<T> {
  try {
    return await importer();
  } catch (err) {
    throw isNotFound(err, pkg) ? missing(pkg, feature, err) : err;
  }
}

/** The `ws` package; `feature` names what needs it, for the error when it is missing. */
export function loadWs(feature: string): Promise<Ws> {
  ws ??= load('ws', feature, () => import('ws'));
  ws.catch(() => {
    ws = undefined;
  });
  return ws;
}

/**
 * `ws`'s client socket for the links that carry a session's traffic between webmpc's own Node
 * endpoints (the WebSocket mesh, a client dialling a server), with an all-zero masking key.
 *
 * RFC 6455 has clients mask every frame with a fresh random key. Masking exists so that a script
 * in a browser cannot put bytes of its choosing on the wire and confuse a transparent proxy; here
 * the sender is a Node process, its peer is webmpc's own `ws` server, and the payload is the
 * protocol's (ciphertext, on a secure transport). Masking in JavaScript (`ws` without its native
 * helper) cost the clients bench's servers about a sixth of their main thread (measured
 * 2026-11-27); `ws` skips the XOR for an all-zero key. Browsers mask natively and are unaffected.
 */
export async function loadWsBulkClient(feature: string): Promise<WebSocketConstructor> {
  const { WebSocket } = await loadWs(feature);
  bulkClient ??= class BulkWebSocket extends WebSocket {
    constructor(url: string) {
      super(url, undefined, { generateMask: zeroMask });
    }
  } as unknown as WebSocketConstructor;
  return bulkClient;
}

let bulkClient: WebSocketConstructor | undefined;

function zeroMask(mask: Uint8Array): void {
  mask.fill(0);
}

/** node-datachannel's W3C polyfill (`RTCPeerConnection` for Node). */
export function loadNodeDatachannel(feature: string): Promise<Polyfill> {
  polyfill ??= load('node-datachannel', feature, () => import('node-datachannel/polyfill'));
  polyfill.catch(() => {
    polyfill = undefined;
  });
  return polyfill;
}
