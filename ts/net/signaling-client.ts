/**
 * A party's side of the signaling protocol (see signaling-protocol.ts). Browser-safe.
 */
import { TransportError } from '../errors.js';
import { transportError } from './base.js';
import {
  MAX_SIGNALING_MESSAGE_BYTES,
  parseServerMessage,
  type IceServerConfig,
  type ServerMessage,
  type SignalData,
} from './signaling-protocol.js';
import { closeWebSocket, openWebSocket, WS_OPEN, type WebSocketConstructor, type WebSocketLike } from './websocket-like.js';

export interface SignalingHandlers {
  onPeerJoined(party: number): void;
  onPeerLeft(party: number): void;
  onSignal(from: number, data: SignalData): void;
  /** The server refused us, sent garbage, or went away. Called at most once. */
  onFailure(error: TransportError): void;
}

export class SignalingClient {
  private constructor(
    private readonly socket: WebSocketLike,
    readonly iceServers: IceServerConfig[],
    /** Parties already in the room when we joined. */
    readonly present: number[],
  ) {}

  /** Connects, joins `room`, and resolves with the server's `joined` answer. */
  static async join(options: {
    url: string;
    room: string;
    party: number;
    parties: number;
    WebSocket: WebSocketConstructor;
    timeoutMs: number;
    handlers: SignalingHandlers;
    signal?: AbortSignal | undefined;
  }): Promise<SignalingClient> {
    const { parties, handlers } = options;
    const socket = await openWebSocket(options.WebSocket, options.url, options.timeoutMs, 'SIGNALING_FAILED', options.signal);
    return new Promise<SignalingClient>((resolve, reject) => {
      let client: SignalingClient | undefined;
      let failed = false;
      const fail = (error: TransportError) => {
        if (failed) return;
        failed = true;
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        socket.onmessage = socket.onclose = socket.onerror = null;
        void closeWebSocket(socket, false, 0);
        if (client) handlers.onFailure(error);
        else reject(error);
      };
      const timer = setTimeout(
        () => fail(transportError('TIMEOUT', `signaling server did not answer within ${options.timeoutMs} ms`)),
        options.timeoutMs,
      );
      // Cancelling before the join is answered must not leave the socket and timer behind.
      const onAbort = () => {
        if (!client) fail(transportError('ABORTED', 'connect aborted', undefined, options.signal?.reason));
      };
      if (options.signal?.aborted) onAbort();
      else options.signal?.addEventListener('abort', onAbort, { once: true });
      socket.onmessage = (event) => {
        const text = event.data;
        const message: ServerMessage | undefined =
          typeof text === 'string' && text.length <= MAX_SIGNALING_MESSAGE_BYTES ? parseServerMessage(text, parties) : undefined;
        if (!message) return fail(transportError('SIGNALING_FAILED', 'malformed message from the signaling server'));
        if (message.type === 'error') {
          return fail(transportError('SIGNALING_FAILED', `signaling server refused: ${message.reason}`));
        }
        if (!client) {
          if (message.type !== 'joined') return fail(transportError('SIGNALING_FAILED', 'signaling server skipped the join answer'));
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', onAbort);
          client = new SignalingClient(socket, message.iceServers, message.present);
          resolve(client);
          return;
        }
        if (message.type === 'peer-joined') handlers.onPeerJoined(message.party);
        else if (message.type === 'peer-left') handlers.onPeerLeft(message.party);
        else if (message.type === 'signal') handlers.onSignal(message.from, message.data);
        else fail(transportError('SIGNALING_FAILED', 'unexpected message from the signaling server'));
      };
      socket.onclose = () => fail(transportError('SIGNALING_FAILED', 'signaling server closed the connection'));
      socket.onerror = () => fail(transportError('SIGNALING_FAILED', 'signaling connection failed'));
      if (!failed) socket.send(JSON.stringify({ type: 'join', room: options.room, party: options.party, parties }));
    });
  }

  send(to: number, data: SignalData): void {
    if (this.socket.readyState === WS_OPEN) this.socket.send(JSON.stringify({ type: 'signal', to, data }));
  }

  /** Leaves the room. Idempotent; never throws. */
  close(): Promise<void> {
    this.socket.onmessage = this.socket.onclose = this.socket.onerror = null;
    return closeWebSocket(this.socket, true, 1_000);
  }
}
