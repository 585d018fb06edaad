/**
 * Auction rooms: the shareable link, joining a room through the signaling server (taking the
 * first free bidder seat), the secure channels between the bidders, and failures explained for
 * people. Browser-safe; the page and the Node bidder share it.
 */
import type { Transport } from 'webmpc';
import type { MeshPeerState } from 'webmpc/net';
import { secureTransport, type Identity, type PeerVerification, type SecureTransport } from 'webmpc/secure';
import { DEFAULT_ENGINE, MAX_BIDDERS, MIN_BIDDERS, engineNamed, isOffered, phaseLabel, type EngineName } from './auction.js';

/** The rule the signaling server applies to room names (checked here first, with a clear message). */
export const ROOM_RULE = /^[A-Za-z0-9_.-]{1,128}$/;

/** Everything a bidder needs to join an auction: what the shareable link carries. */
export interface AuctionLink {
  room: string;
  bidders: number;
  engine: EngineName;
  /** The signaling server; default: the one the app was served with. */
  signalingUrl: string | undefined;
  /** A fixed bidder seat (0-based); default: the first free one. */
  seat: number | undefined;
}

/** Why a room name is refused, or undefined if it is fine. */
export function roomProblem(room: string): string | undefined {
  if (ROOM_RULE.test(room)) return undefined;
  return 'a room name is 1 to 128 characters: letters, digits, "_", "." and "-"';
}

/** A fresh, unguessable room name. */
export function newRoomName(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return `auction-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/**
 * Reads an auction link's query (`room`, `n`, `engine`, `signal`, `seat`). Returns the link, or
 * the first problem found (in words), or undefined when there is no room (the "create" page).
 */
export function parseLink(query: URLSearchParams): AuctionLink | { problem: string } | undefined {
  const room = query.get('room');
  if (room === null) return undefined;
  const bad = roomProblem(room);
  if (bad) return { problem: `The link's room name is not valid: ${bad}.` };
  const n = Number(query.get('n'));
  if (!Number.isInteger(n) || n < MIN_BIDDERS || n > MAX_BIDDERS) {
    return { problem: `The link must say how many bidders take part (n=${MIN_BIDDERS}…${MAX_BIDDERS}).` };
  }
  const engineParam = query.get('engine');
  const engine = engineParam === null ? engineNamed(DEFAULT_ENGINE) : engineNamed(engineParam);
  if (!engine) return { problem: `The link names an unknown engine "${engineParam}" (known: authgc, mascot, plain).` };
  if (!engine.available) return { problem: `This build of the app does not have the engine "${engine.name}" yet.` };
  if (!isOffered(engine)) return { problem: `The engine "${engine.name}" has no privacy and is not offered; use ${DEFAULT_ENGINE}.` };
  const signal = query.get('signal') ?? undefined;
  if (signal !== undefined && !/^wss?:\/\/[^\s]+$/.test(signal)) {
    return { problem: 'The link\'s signaling server must be a ws:// or wss:// URL.' };
  }
  const seatParam = query.get('seat');
  let seat: number | undefined;
  if (seatParam !== null) {
    seat = Number(seatParam);
    if (!Number.isInteger(seat) || seat < 0 || seat >= n) return { problem: `The link's bidder seat must be 0 to ${n - 1}.` };
  }
  return { room, bidders: n, engine: engine.name, signalingUrl: signal, seat };
}

/** The shareable link for `link` on the app at `base` (its URL without query). */
export function linkUrl(base: string, link: Omit<AuctionLink, 'seat'> & { seat?: number | undefined }): string {
  const url = new URL(base);
  url.search = '';
  url.searchParams.set('room', link.room);
  url.searchParams.set('n', String(link.bidders));
  url.searchParams.set('engine', link.engine);
  if (link.signalingUrl) url.searchParams.set('signal', link.signalingUrl);
  if (link.seat !== undefined) url.searchParams.set('seat', String(link.seat));
  return url.href;
}

/** What the room-joining code needs from the platform's WebRTC mesh (`connectMesh`/`connectNodeMesh`). */
export type ConnectMesh = (options: {
  signalingUrl: string;
  room: string;
  party: number;
  parties: number;
  connectTimeoutMs: number;
  signal?: AbortSignal;
  onPeer?: (peer: number, state: MeshPeerState) => void;
}) => Promise<Transport>;

export interface JoinOptions {
  connect: ConnectMesh;
  signalingUrl: string;
  room: string;
  bidders: number;
  /** A fixed seat; default: try 0, 1, … and take the first one nobody holds. */
  seat?: number | undefined;
  /** How long to wait for every bidder to arrive and connect. */
  waitMs: number;
  signal?: AbortSignal | undefined;
  /** Told which seat this bidder tries, then holds. */
  onSeat?: (seat: number) => void;
  /** Told as each other bidder arrives in the room and as its connection opens. */
  onPeer?: (bidder: number, state: MeshPeerState) => void;
}

/** The bidder seat is taken: the signaling server refuses a second party with the same index. */
function seatTaken(err: unknown): boolean {
  return (err as { code?: unknown })?.code === 'SIGNALING_FAILED' && /duplicate-party/.test(String((err as Error).message));
}

/**
 * Joins the room as the first free bidder seat (or `seat`) and waits until every bidder is
 * connected over WebRTC. Resolves with the mesh (this bidder is `transport.party`).
 */
export async function joinRoom(o: JoinOptions): Promise<Transport> {
  const seats = o.seat !== undefined ? [o.seat] : [...Array(o.bidders).keys()];
  for (const seat of seats) {
    o.onSeat?.(seat);
    try {
      return await o.connect({
        signalingUrl: o.signalingUrl,
        room: o.room,
        party: seat,
        parties: o.bidders,
        connectTimeoutMs: o.waitMs,
        ...(o.signal ? { signal: o.signal } : {}),
        ...(o.onPeer ? { onPeer: o.onPeer } : {}),
      });
    } catch (err) {
      if (!seatTaken(err) || o.seat !== undefined) throw err;
    }
  }
  throw new AuctionFailure('ROOM_FULL', 'connecting', `All ${o.bidders} bidder seats of this room are taken.`);
}

/** One other bidder's identity as this bidder saw it in the key exchange. */
export interface PeerIdentity {
  bidder: number;
  /** Hex of its Ed25519 public key, as proven in the handshake. */
  fingerprint: string;
  /**
   * The pair's short authentication string ("123 456"): the same on both ends of an honest
   * connection, different if anything sits in between. People compare it.
   */
  sas: string;
  /** Whether it was checked against a pinned key (then there is nothing to compare). */
  pinned: boolean;
}

/** A short, readable form of a fingerprint: the first 16 hex digits in groups of four. */
export function shortFingerprint(hex: string): string {
  return (hex.slice(0, 16).match(/..../g) ?? []).join(' ');
}

export interface SecureOptions {
  transport: Transport;
  identity: Identity;
  room: string;
  /** Every other bidder's public key (scripted bidders, who exchanged keys beforehand). */
  pinned?: readonly (Uint8Array | undefined)[] | undefined;
  /**
   * Without `pinned`: shown every other bidder's code and key once the key exchange is done;
   * resolves true only if the person confirms the codes match what the other bidders see.
   * `signal` fires when the question is moot (another bidder refused or left, or time is up).
   */
  confirm?: (peers: readonly PeerIdentity[], options: { signal: AbortSignal }) => boolean | Promise<boolean>;
  /** How long everyone may take to compare the codes (default: the SDK's, 5 minutes). */
  confirmTimeoutMs?: number | undefined;
  /** How long the key exchange with every bidder may take (default: the SDK's, 15 s). */
  handshakeTimeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

function identities(verifications: readonly PeerVerification[]): PeerIdentity[] {
  return verifications.map((v) => ({ bidder: v.party, fingerprint: v.fingerprint, sas: v.sas, pinned: v.pinned }));
}

/**
 * Authenticated, encrypted channels between all bidders (`webmpc/secure`), bound to the room.
 * With `pinned` keys every other bidder must prove exactly its key. Without, the channels are
 * handed over only once every bidder's `confirm` accepted the short authentication strings, so a
 * relay or a squatter in the room is caught before any bid is used.
 */
export async function secureRoom(o: SecureOptions): Promise<{ transport: SecureTransport; peers: PeerIdentity[] }> {
  const confirm = o.confirm;
  if (!o.pinned && !confirm) throw new Error('secureRoom: pinned keys or a confirm step are needed');
  const transport = await secureTransport(o.transport, {
    identity: o.identity,
    sessionId: `webmpc-demo-auction/${o.room}`,
    ...(o.pinned
      ? { trust: 'pinned' as const, peers: [...o.pinned] }
      : {
          trust: 'confirm' as const,
          confirm: (peers: readonly PeerVerification[], options: { signal: AbortSignal }) => confirm!(identities(peers), options),
          ...(o.confirmTimeoutMs ? { confirmTimeoutMs: o.confirmTimeoutMs } : {}),
        }),
    ...(o.handshakeTimeoutMs ? { handshakeTimeoutMs: o.handshakeTimeoutMs } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
  });
  return { transport, peers: identities(transport.verifications) };
}

// -------------------------------------------------------------------------------------------
// Failures, in words.
// -------------------------------------------------------------------------------------------

/** An app-level failure (not the SDK's): a full room, a bad link. */
export class AuctionFailure extends Error {
  constructor(
    readonly code: string,
    readonly phase: string,
    message: string,
  ) {
    super(message);
    this.name = 'AuctionFailure';
  }
}

/** A failure as the UI and the CLI show it. */
export interface Explained {
  /** One line: what happened, naming the phase. */
  title: string;
  /** What the SDK said (typed code and message; never a secret: the SDK keeps them out). */
  detail: string;
  code: string;
  phase: string;
  /**
   * The other bidder concerned, when known: for a failed check, only a bidder the check proves
   * deviated.
   */
  peer: number | undefined;
}

/**
 * Turns whatever the auction threw into words, naming the phase it happened in (and the
 * signaling server, when that is what failed).
 */
export function explain(err: unknown, phase: string, context: { signalingUrl?: string } = {}): Explained {
  const e = err as { code?: unknown; peer?: unknown; message?: unknown; remote?: { code?: unknown; message?: unknown } };
  const code = typeof e?.code === 'string' ? e.code : 'ERROR';
  const peer = typeof e?.peer === 'number' ? e.peer : undefined;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  // The SDK numbers parties; people see bidders.
  const remote =
    typeof e?.remote?.message === 'string' ? { code: String(e.remote.code), message: e.remote.message.replace(/\bparty (\d+)/g, 'bidder $1') } : undefined;
  // A protocol's failed check names its own phase and the check (authgc: "online", "MAC of a
  // decrypted row"); that is more precise than the app's phase, which the detail then keeps.
  const protocolPhase = typeof (e as { phase?: unknown })?.phase === 'string' ? ((e as { phase: string }).phase) : undefined;
  const check = typeof (e as { check?: unknown })?.check === 'string' ? ((e as { check: string }).check) : undefined;
  if (protocolPhase) phase = protocolPhase;
  const where = phaseLabel(phase);
  const who = peer === undefined ? 'another bidder' : `bidder ${peer}`;
  // A failed check names a bidder only when the protocol says the check proves that bidder
  // deviated (`peer`); many checks cannot tell (authgc and MASCOT give abort, not identifiable
  // abort), and then nobody may be named.
  const deviated =
    peer === undefined ? 'a bidder deviated from the protocol (this check cannot tell which)' : `bidder ${peer} deviated from the protocol`;
  let title: string;
  switch (code) {
    case 'PEER_DISCONNECTED':
      // A peer that stopped on purpose may say why (the transport's close reason): often that a
      // third bidder vanished. Its word is a hint for people, not evidence.
      title = remote
        ? `${capital(who)} aborted the auction while ${where} (it said: ${remote.message}).`
        : `${capital(who)} left or lost its connection while ${where}; the auction was aborted.`;
      break;
    case 'TIMEOUT':
      title = `Timed out while ${where}${peer === undefined ? '' : `, waiting for bidder ${peer}`}.`;
      break;
    case 'SIGNALING_FAILED':
      title = /room-size-mismatch/.test(message)
        ? 'This room was opened for a different number of bidders; check the link.'
        : `The signaling server${context.signalingUrl ? ` at ${context.signalingUrl}` : ''} refused or failed while ${where}.`;
      break;
    case 'AUTHENTICATION_FAILED':
      title = /confirm/.test(message)
        ? `${peer === undefined ? 'The codes were not confirmed' : `Bidder ${peer} did not confirm the codes`}; the auction was aborted before any bid was used.`
        : `${capital(who)}'s identity could not be verified while ${where}; the auction was aborted.`;
      break;
    case 'CHEATING_DETECTED': {
      const name = check ?? checkNamedIn(message);
      // MASCOT compares what every bidder saw broadcast: the bidder it names saw something else,
      // which a cheater who sent bidders different values also causes.
      title =
        name === 'broadcast consistency check' && peer !== undefined
          ? `A check failed while ${where} (${name}): bidder ${peer}'s view of what was broadcast differs from this bidder's, so either bidder ${peer} deviated from the protocol or another bidder sent different bidders different values. The auction was aborted.`
          : `A check failed while ${where}${name ? ` (${name})` : ''}: ${deviated}. The auction was aborted.`;
      break;
    }
    case 'MAC_CHECK_FAILED':
    case 'SACRIFICE_FAILED': {
      // MASCOT's checks on shared values: they catch a changed value, not who changed it.
      const name = check ?? (code === 'MAC_CHECK_FAILED' ? 'MAC check' : 'sacrifice check of the triples');
      title = `A check failed while ${where} (${name}): ${deviated}. The auction was aborted.`;
      break;
    }
    case 'MALFORMED_MESSAGE':
    case 'PROTOCOL_ERROR':
      title = `${capital(who)} sent a malformed message while ${where}${check ? ` (${check})` : ''}; the auction was aborted.`;
      break;
    case 'PARAMETER_MISMATCH':
      title = 'The bidders disagree on the auction (engine, bidder count, circuit or program); check that everyone used the same link.';
      break;
    case 'ABORTED':
    case 'CLOSED':
      title = `The auction was cancelled while ${where}.`;
      break;
    case 'ROOM_FULL':
      title = message;
      break;
    case 'UNSUPPORTED':
      // WebKitGTK as some Linux distributions build it has no WebRTC: the bidders' pages connect
      // to each other with it, so this browser cannot take part.
      title = 'This browser has no WebRTC, which the auction needs to connect the bidders; open the link in another browser.';
      break;
    default:
      title = `The auction failed while ${where}.`;
  }
  return { title, detail: `${code}: ${message}`, code, phase, peer };
}

/**
 * The check a protocol's message names when the error carries no `check` field (MASCOT's say
 * "party 2 failed the broadcast consistency check: aborting"); for the title only, the detail
 * keeps the message whole.
 */
function checkNamedIn(message: string): string | undefined {
  return /\bfailed the ([a-z0-9 -]{1,60}): aborting/i.exec(message)?.[1];
}

function capital(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
