/**
 * The signaling protocol: JSON text messages between parties and the signaling server, shared
 * by the server (which validates everything a client sends) and the clients (which validate
 * everything the server relays, since a server may be buggy or hostile).
 *
 * Client → server: `join` first, then `signal`s.
 *   { type: 'join', room, party, parties }
 *   { type: 'signal', to, data }
 * Server → client:
 *   { type: 'joined', present: number[], iceServers }  present: parties already in the room
 *   { type: 'peer-joined', party } / { type: 'peer-left', party }
 *   { type: 'signal', from, data }
 *   { type: 'error', reason }  then the server closes the socket
 *
 * `data` is an SDP description or an ICE candidate, nothing else: the server relays only what
 * introduces peers, never protocol data.
 *
 * Browser-safe: no Node imports.
 */

/** Longest signaling message accepted by the server or a client (bytes of JSON). */
export const MAX_SIGNALING_MESSAGE_BYTES = 64 * 1024;
/** Room ids: 1–128 characters from a URL- and log-safe alphabet. */
export const ROOM_ID = /^[A-Za-z0-9_.-]{1,128}$/;
export const MAX_PARTIES = 64;

export type SignalData =
  | { kind: 'description'; type: 'offer' | 'answer'; sdp: string }
  | { kind: 'candidate'; candidate: string; sdpMid: string | null; sdpMLineIndex: number | null };

export interface IceServerConfig {
  urls: string | string[];
  username?: string;
  credential?: string;
}

export type ClientMessage =
  | { type: 'join'; room: string; party: number; parties: number }
  | { type: 'signal'; to: number; data: SignalData };

export type ServerMessage =
  | { type: 'joined'; present: number[]; iceServers: IceServerConfig[] }
  | { type: 'peer-joined'; party: number }
  | { type: 'peer-left'; party: number }
  | { type: 'signal'; from: number; data: SignalData }
  | { type: 'error'; reason: SignalingRefusal };

/** Why the server refused a client; sent to it before the server closes the socket. */
export type SignalingRefusal =
  | 'malformed-message'
  | 'message-too-large'
  | 'not-joined'
  | 'already-joined'
  | 'bad-room'
  | 'bad-party'
  | 'room-size-mismatch'
  | 'duplicate-party'
  | 'too-many-rooms'
  | 'bad-destination'
  /** This address already has as many connections (or rooms) open as the server allows. */
  | 'too-many-connections'
  | 'too-many-rooms-for-address'
  /** The client sent more signaling than any introduction needs. */
  | 'rate-limited'
  /** The client did not join a room in time, or stayed silent too long. */
  | 'join-timeout'
  | 'idle-timeout';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isIndex(value: unknown, bound: number): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) < bound;
}

function hasOnlyKeys(value: Json, keys: readonly string[]): boolean {
  return Object.keys(value).every((k) => keys.includes(k));
}

/** Validates `data` of a signal; returns a clean copy (no extra fields) or undefined. */
export function parseSignalData(value: unknown): SignalData | undefined {
  if (!isObject(value)) return undefined;
  if (value.kind === 'description') {
    if (!hasOnlyKeys(value, ['kind', 'type', 'sdp'])) return undefined;
    if ((value.type !== 'offer' && value.type !== 'answer') || typeof value.sdp !== 'string') return undefined;
    return { kind: 'description', type: value.type, sdp: value.sdp };
  }
  if (value.kind === 'candidate') {
    if (!hasOnlyKeys(value, ['kind', 'candidate', 'sdpMid', 'sdpMLineIndex'])) return undefined;
    const { candidate, sdpMid, sdpMLineIndex } = value;
    if (typeof candidate !== 'string') return undefined;
    if (sdpMid !== null && typeof sdpMid !== 'string') return undefined;
    if (sdpMLineIndex !== null && !isIndex(sdpMLineIndex, 65_536)) return undefined;
    return { kind: 'candidate', candidate, sdpMid, sdpMLineIndex };
  }
  return undefined;
}

/** Parses a client message as the server must: anything unexpected is `undefined`. */
export function parseClientMessage(text: string): ClientMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(value)) return undefined;
  if (value.type === 'join') {
    if (!hasOnlyKeys(value, ['type', 'room', 'party', 'parties'])) return undefined;
    const { room, party, parties } = value;
    if (typeof room !== 'string' || !Number.isSafeInteger(party) || !Number.isSafeInteger(parties)) return undefined;
    return { type: 'join', room, party: party as number, parties: parties as number };
  }
  if (value.type === 'signal') {
    if (!hasOnlyKeys(value, ['type', 'to', 'data'])) return undefined;
    const data = parseSignalData(value.data);
    if (!Number.isSafeInteger(value.to) || data === undefined) return undefined;
    return { type: 'signal', to: value.to as number, data };
  }
  return undefined;
}

function parseIceServers(value: unknown): IceServerConfig[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const out: IceServerConfig[] = [];
  for (const entry of value) {
    if (!isObject(entry)) return undefined;
    const { urls, username, credential } = entry;
    const urlsOk = typeof urls === 'string' || (Array.isArray(urls) && urls.every((u) => typeof u === 'string'));
    if (!urlsOk) return undefined;
    const server: IceServerConfig = { urls: urls as string | string[] };
    if (typeof username === 'string') server.username = username;
    if (typeof credential === 'string') server.credential = credential;
    out.push(server);
  }
  return out;
}

/** Parses a server message as a client must, given the room size it joined. */
export function parseServerMessage(text: string, parties: number): ServerMessage | undefined {
  if (text.length > MAX_SIGNALING_MESSAGE_BYTES) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(value)) return undefined;
  switch (value.type) {
    case 'joined': {
      const iceServers = parseIceServers(value.iceServers);
      const present = value.present;
      if (!iceServers || !Array.isArray(present) || !present.every((p) => isIndex(p, parties))) return undefined;
      return { type: 'joined', present: present as number[], iceServers };
    }
    case 'peer-joined':
    case 'peer-left':
      return isIndex(value.party, parties) ? { type: value.type, party: value.party } : undefined;
    case 'signal': {
      const data = parseSignalData(value.data);
      return isIndex(value.from, parties) && data ? { type: 'signal', from: value.from, data } : undefined;
    }
    case 'error':
      return typeof value.reason === 'string' ? { type: 'error', reason: value.reason as SignalingRefusal } : undefined;
    default:
      return undefined;
  }
}
