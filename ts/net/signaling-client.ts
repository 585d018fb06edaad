/**
 * A party's side of the signaling protocol (see signaling-protocol.ts). Browser-safe.
 */
import { TransportError } from '../errors.js';
import { transportError } from './base.js';
import {
  MAX_SIGNALING_MESSAGE_BYTES,
  ROOM_ID,
  parseServerMessage,
  type IceServerConfig,
  type ServerMessage,
  type SignalData,
  type SignalingRefusal,
} from './signaling-protocol.js';
import { closeWebSocket, openWebSocket, WS_OPEN, type WebSocketConstructor, type WebSocketLike } from './websocket-like.js';

/**
 * Refuses a room name the signaling server would refuse, before connecting, naming the rule it
 * breaks: 1 to 128 characters, each a letter, digit, `_`, `.` or `-`.
 */
export function checkRoomName(room: unknown, what = 'room'): void {
  if (typeof room === 'string' && ROOM_ID.test(room)) return;
  let rule: string;
  if (typeof room !== 'string') rule = 'must be a string';
  else if (room.length === 0) rule = 'is empty';
  else if (room.length > 128) rule = `has ${room.length} characters (at most 128)`;
  else {
    const bad = [...room].find((c) => !/[A-Za-z0-9_.-]/.test(c))!;
    rule = `contains ${JSON.stringify(bad)} at position ${room.indexOf(bad)}`;
  }
  const name = typeof room === 'string' && room.length > 0 ? ` ${JSON.stringify(room.length > 40 ? `${room.slice(0, 40)}...` : room)}` : '';
  throw transportError('INVALID_ARGUMENT', `${what}${name} ${rule}: a room name is 1 to 128 characters, each a letter, digit, '_', '.' or '-'`);
}

/** What reasons the server gives mean, for error messages. */
const REFUSALS: Partial<Record<SignalingRefusal, string>> = {
  'room-size-mismatch': 'the room was opened by parties that gave another party count',
  'duplicate-party': 'another client already holds this party index in the room',
  'bad-party': 'the party index is out of range for the room size',
  'bad-room': 'the room name is not 1 to 128 characters of letters, digits, _ . -',
  'too-many-rooms': 'the server has as many rooms open as it allows',
  'too-many-connections': 'this address has as many connections open as the server allows',
  'too-many-rooms-for-address': 'this address has as many rooms open as the server allows',
  'join-timeout': 'the join took too long',
  'idle-timeout': 'the connection was silent too long',
};

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
    checkRoomName(options.room);
    // Every error says where: the server, the room and this party's seat.
    const where = `the signaling server ${options.url} (room '${options.room}', party ${options.party} of ${parties})`;
    let socket: WebSocketLike;
    try {
      socket = await openWebSocket(options.WebSocket, options.url, options.timeoutMs, 'SIGNALING_FAILED', options.signal);
    } catch (err) {
      const e = err as TransportError;
      if (e.code === 'ABORTED') throw e;
      throw transportError(e.code, `could not connect to ${where}: ${e.message}`, undefined, e);
    }
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
        () => fail(transportError('TIMEOUT', `${where} did not answer within ${options.timeoutMs} ms`)),
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
        if (!message) return fail(transportError('SIGNALING_FAILED', `malformed message from ${where}`));
        if (message.type === 'error') {
          return fail(
            transportError(
              'SIGNALING_FAILED',
              `${where} refused: ${message.reason}${REFUSALS[message.reason] ? ` (${REFUSALS[message.reason]})` : ''}`,
            ),
          );
        }
        if (!client) {
          if (message.type !== 'joined') return fail(transportError('SIGNALING_FAILED', `${where} skipped the join answer`));
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', onAbort);
          client = new SignalingClient(socket, message.iceServers, message.present);
          resolve(client);
          return;
        }
        if (message.type === 'peer-joined') handlers.onPeerJoined(message.party);
        else if (message.type === 'peer-left') handlers.onPeerLeft(message.party);
        else if (message.type === 'signal') handlers.onSignal(message.from, message.data);
        else fail(transportError('SIGNALING_FAILED', `unexpected message from ${where}`));
      };
      socket.onclose = () => fail(transportError('SIGNALING_FAILED', `${where} closed the connection`));
      socket.onerror = () => fail(transportError('SIGNALING_FAILED', `the connection to ${where} failed`));
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
