/**
 * webmpc's network layer, browser-safe part: the {@link Transport} contract and the transports
 * that run anywhere (in-memory, WebRTC mesh over the W3C API, WebSocket relay client). Node-only
 * pieces (signaling server, direct WebSocket mesh, the Node WebRTC library) are in `./node.js`.
 */
export type { Transport, RecvOptions } from './transport.js';
export { DEFAULTS as TRANSPORT_DEFAULTS, type TransportOptions } from './base.js';
export type { RemoteCloseReason } from '../errors.js';
export { FRAMED_DEFAULTS, DEFAULT_RECEIVE_WINDOW_BYTES, type FramedOptions } from './framed.js';
export { createMemoryTransports, type MemoryTransportOptions } from './memory.js';
export { splitTransport, MAX_CHANNELS, DEFAULT_CHANNEL_WINDOW, type Mux, type SplitOptions } from './mux.js';
export { connectMesh, type MeshPeerState, type WebRtcMeshOptions, type RTCPeerConnectionConstructor } from './webrtc.js';
export { connectRelay, type RelayOptions } from './relay.js';
export type { WebSocketConstructor, WebSocketLike } from './websocket-like.js';
export type { IceServerConfig, SignalingRefusal } from './signaling-protocol.js';
