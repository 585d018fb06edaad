/**
 * webmpc's network layer, Node-only part: everything in `./index.js`, plus the signaling server
 * (with the optional relay), the direct WebSocket mesh, and Node defaults for the WebRTC mesh
 * and the relay client.
 *
 * WebRTC in Node uses `node-datachannel` 0.33 (libdatachannel) through its W3C polyfill, so the
 * mesh code is the browser's. Chosen over `@roamhq/wrtc` 0.10 because it fires
 * `bufferedamountlow` (wrtc never does, so its senders can only poll), takes the full 256 KiB
 * message (wrtc silently closes the channel on 1 MiB messages), and is the smaller native
 * dependency. Measured through this transport (scripts/bench/transport.mjs, two processes on
 * loopback, 2-core VM, two runs): 72–96 MB/s (64 MiB as one message or in 1 MiB messages),
 * 0.14–0.17 ms median round trip; wrtc did 79–94 MB/s and 0.15–0.23 ms. Equal within noise, so
 * robustness decides.
 * Both spend about 20 ms of CPU per MB moved (both processes together), most of it in the native
 * SCTP/DTLS worker threads on ~1.2 KB packets rather than in JavaScript (the main threads take
 * ~1 ms/MB; 256 KiB instead of 64 KiB frames changed nothing measurable), so two cores move at
 * most ~100 MB/s whatever the framing (see `npm run bench -- transport`, `cpu_per_MB`).
 */
import { connectMesh, type RTCPeerConnectionConstructor, type WebRtcMeshOptions } from './webrtc.js';
import { connectRelay, type RelayOptions } from './relay.js';
import type { Transport } from './transport.js';
import type { WebSocketConstructor } from './websocket-like.js';
import { loadNodeDatachannel, loadWs } from './optional.js';

export * from './index.js';
export { dialServer, listenForClients, type ClientSocketListener } from './client-sockets.js';
export { startSignalingServer, type SignalingServer, type SignalingServerOptions } from './server.js';
export {
  connectWebSocketMesh,
  listenWebSocket,
  type WebSocketListener,
  type WebSocketMeshOptions,
} from './websocket-mesh.js';

/**
 * The `ws` client, typed as the WHATWG subset the transports use. `ws` is an optional peer
 * dependency, loaded on first use: rejects with `MISSING_DEPENDENCY` when it is not installed.
 */
export async function nodeWebSocket(): Promise<WebSocketConstructor> {
  return (await loadWs('a WebSocket in Node')).WebSocket as unknown as WebSocketConstructor;
}

/**
 * node-datachannel's W3C `RTCPeerConnection`, loaded on first use (a native module and an
 * optional peer dependency: rejects with `MISSING_DEPENDENCY` when it is not installed).
 */
export async function nodeRTCPeerConnection(): Promise<RTCPeerConnectionConstructor> {
  const m = await loadNodeDatachannel('WebRTC in Node');
  return m.RTCPeerConnection as unknown as RTCPeerConnectionConstructor;
}

/**
 * {@link connectMesh} with Node defaults: node-datachannel and the `ws` client (both optional
 * peer dependencies: install them with `npm install node-datachannel ws`).
 */
export async function connectNodeMesh(
  options: Omit<WebRtcMeshOptions, 'RTCPeerConnection' | 'WebSocket'> &
    Partial<Pick<WebRtcMeshOptions, 'RTCPeerConnection' | 'WebSocket'>>,
): Promise<Transport> {
  return connectMesh({
    ...options,
    RTCPeerConnection: options.RTCPeerConnection ?? (await nodeRTCPeerConnection()),
    WebSocket: options.WebSocket ?? (await nodeWebSocket()),
  });
}

/** {@link connectRelay} with the `ws` client (an optional peer dependency: `npm install ws`). */
export async function connectNodeRelay(options: Omit<RelayOptions, 'WebSocket'>): Promise<Transport> {
  return connectRelay({ ...options, WebSocket: await nodeWebSocket() });
}
