/**
 * The pairwise authenticated key exchange run by `secureTransport` before any traffic.
 *
 * ## Goal
 * After the inner transport connects parties i and j, each must be sure the other end holds the
 * long-term Ed25519 key the app expects for that party index, in *this* session, and both must
 * agree on fresh keys no eavesdropper or relay can compute. The inner transport (signaling server,
 * WebRTC/DTLS, WebSocket relay) is not trusted for any of this: it may swap, drop, replay or
 * rewrite anything. When the app has no key to expect (nothing pinned), the handshake yields a
 * short authentication string (SAS) that the two people compare instead.
 *
 * ## Messages (both sides send the same four messages; no initiator/responder roles)
 * ```
 * COMMIT  = 0x05 ‖ version (0x02) ‖ BLAKE2b-256("webmpc secure channel v2 commit" ‖ u32 sender ‖ u32 receiver ‖ HELLO)  34 B
 * HELLO   = 0x01 ‖ version (0x02) ‖ ephemeral X25519 public key (32) ‖ identity Ed25519 key (32)  66 B
 * AUTH    = 0x02 ‖ version (0x02) ‖ Ed25519 signature (64)                                        66 B
 * CONFIRM = 0x04 ‖ version (0x02) ‖ key-confirmation tag (32)                                     34 B
 * ALERT   = 0x03 ‖ version (0x02) ‖ reason (1)                                                     3 B
 * ```
 * Each side sends COMMIT and reads the peer's COMMIT, and only then sends its HELLO; reads the
 * peer's HELLO and checks it against the peer's COMMIT; checks the peer's identity key against
 * the pin (if any), sends AUTH, reads and verifies the peer's AUTH, derives the keys, sends
 * CONFIRM, and reads and checks the peer's CONFIRM. Symmetric messages need no rule for who
 * speaks first, which matters when all n(n−1)/2 pairs handshake at once.
 *
 * COMMIT is what makes a 6-digit SAS safe. A relay that wants to sit in the middle runs one
 * handshake with each end, posing as the other; both SASes must come out equal for the two
 * people comparing them to be fooled. Without commitments it could pick its own ephemerals after
 * seeing the honest ones and search for a collision (2^20 tries are cheap). With them, on each
 * side it is bound to its HELLO before that side's honest, fresh ephemeral is revealed, so each
 * SAS it ends up with is uniformly random to it: it succeeds with probability 10^-6 per attempt,
 * and every failed attempt shows up as a mismatch to the people comparing.
 *
 * CONFIRM proves that the peer derived the same keys (so it holds the ephemeral secret it
 * signed for) and, as important in practice, that the peer *accepted our AUTH*: without it a
 * party whose AUTH the peer rejects would already consider the channel up, and would only learn
 * of the failure at its first `recv`. With it, a failure in HELLO or AUTH makes both ends fail
 * the handshake with the same code. (Only tampering with the very last message, CONFIRM, can
 * still leave one end up and the other failed — inherent to any protocol with a last message;
 * that end then fails on its first `recv`.)
 *
 * ## What is signed (SIGMA-style "sign the transcript")
 * With lo = min(i, j), hi = max(i, j), the transcript hash is
 * ```
 * TH = BLAKE2b-256( "webmpc secure channel v2 transcript" ‖ u32 parties ‖ u32 |sid| ‖ sid
 *                   ‖ u32 lo ‖ u32 hi ‖ idpk_lo ‖ idpk_hi ‖ eph_lo ‖ eph_hi )
 * ```
 * (u32 big-endian; every field is fixed-size except the length-prefixed session id, so the
 * encoding is unambiguous) and party p's AUTH signs
 * `"webmpc secure channel v2 signature" ‖ u32 p ‖ TH` with p's identity key. Therefore:
 * - a relay that swaps ephemeral keys (what swapping SDP or DTLS fingerprints amounts to) makes
 *   the two sides hash different transcripts, and both signatures fail;
 * - a relay that substitutes its own identity key and signs with it fails the pin check. Without
 *   a pin (trust-on-first-use) nothing stops it: it can run one complete handshake with each end
 *   under its own key, and both ends accept and talk through it. What such a relay cannot do is
 *   hide: each end sees the relay's key instead of its peer's, and the two ends' transcripts, and
 *   so their SASes, differ (see COMMIT above). That is why unpinned keys must be confirmed — by a
 *   person comparing the SAS or the key — before anything secret is sent;
 * - a signature cannot be replayed into another session (session id, party count), another pair
 *   or another party seat (both indices), or reflected back to its signer (signer index);
 * - a fresh ephemeral on both sides makes every transcript unique, so old AUTH messages are
 *   useless, and the traffic keys are forward-secret (ephemeral secrets are wiped after use).
 *
 * ## Key derivation, confirmation and SAS
 * `okm = BLAKE2b-512(key = s, "webmpc secure channel v2 keys" ‖ TH ‖ 0x00)
 *     ‖ BLAKE2b-512(key = s, "webmpc secure channel v2 keys" ‖ TH ‖ 0x01)`, truncated to 96 bytes,
 * with s = X25519(eph_sk, peer_eph) (keyed BLAKE2b is a PRF, as in libsodium's own `crypto_kx`;
 * two blocks because BLAKE2b stops at 64 bytes), split into `k_lo→hi`, `k_hi→lo` and
 * `k_confirm`, 32 bytes each. One key per direction means the two directions never share a
 * (key, nonce) pair even though both count messages from zero. Hashing TH in binds the keys to
 * everything that was authenticated. An all-zero X25519 output (low-order peer point) is
 * rejected. Party p's CONFIRM tag is
 * `BLAKE2b-256(key = k_confirm, message = "webmpc secure channel v2 confirm" ‖ u32 p ‖ TH)`,
 * compared in constant time. The pair's SAS is the first 8 bytes of
 * `BLAKE2b-256("webmpc secure channel v2 sas" ‖ TH)` as a big-endian integer mod 10^6, written as
 * six digits `"123 456"`; it is public (it reveals nothing about the keys).
 *
 * ## Failures
 * Malformed COMMIT/HELLO/AUTH (wrong length, type or version) → `PROTOCOL_ERROR`; a HELLO that
 * does not match its COMMIT, pin mismatch, bad signature, weak ephemeral key →
 * `AUTHENTICATION_FAILED`; no progress before the deadline → `TIMEOUT`. Before giving up, a party
 * sends ALERT to every peer whose handshake has not finished, so that both ends of a failed pair
 * report the same code rather than one of them waiting for a timeout. ALERT is unauthenticated:
 * it can only end a handshake, which a relay that drops messages can do anyway.
 */
import { concatBytes } from '../bytes.js';
import { TransportError, type TransportErrorCode } from '../errors.js';
import type { Transport } from '../net/transport.js';
import type { Identity } from './identity.js';
import { PUBLIC_KEY_BYTES } from './identity.js';
import { bytesEqual, type Sodium, wipe } from './sodium.js';

/** Wire version of the handshake and record formats; bump on any incompatible change. */
export const PROTOCOL_VERSION = 2;

const HELLO = 0x01;
const AUTH = 0x02;
const ALERT = 0x03;
const CONFIRM = 0x04;
const COMMIT = 0x05;

const EPHEMERAL_KEY_BYTES = 32;
const SIGNATURE_BYTES = 64;
const HELLO_BYTES = 2 + EPHEMERAL_KEY_BYTES + PUBLIC_KEY_BYTES;
const AUTH_BYTES = 2 + SIGNATURE_BYTES;
const ALERT_BYTES = 3;
const CONFIRM_TAG_BYTES = 32;
const CONFIRM_BYTES = 2 + CONFIRM_TAG_BYTES;
const COMMIT_HASH_BYTES = 32;
const COMMIT_BYTES = 2 + COMMIT_HASH_BYTES;
/** Largest handshake message: what the inner transport must accept before authentication. */
export const MAX_HANDSHAKE_MESSAGE_BYTES = Math.max(HELLO_BYTES, AUTH_BYTES, CONFIRM_BYTES, COMMIT_BYTES, ALERT_BYTES);
/** Size of each traffic key (ChaCha20-Poly1305). */
export const TRAFFIC_KEY_BYTES = 32;
/** Size of the transcript hash. */
const TRANSCRIPT_HASH_BYTES = 32;

const encoder = new TextEncoder();
const TRANSCRIPT_LABEL = encoder.encode('webmpc secure channel v2 transcript');
const SIGNATURE_LABEL = encoder.encode('webmpc secure channel v2 signature');
const KEYS_LABEL = encoder.encode('webmpc secure channel v2 keys');
const CONFIRM_LABEL = encoder.encode('webmpc secure channel v2 confirm');
const COMMIT_LABEL = encoder.encode('webmpc secure channel v2 commit');
const SAS_LABEL = encoder.encode('webmpc secure channel v2 sas');

/** ALERT reasons: what the sender of an ALERT observed. */
const ALERT_REASON: Readonly<Record<number, TransportErrorCode>> = {
  1: 'AUTHENTICATION_FAILED',
  2: 'PROTOCOL_ERROR',
  3: 'TIMEOUT',
};

function alertReasonOf(code: TransportErrorCode): number {
  if (code === 'AUTHENTICATION_FAILED') return 1;
  if (code === 'PROTOCOL_ERROR') return 2;
  if (code === 'TIMEOUT') return 3;
  return 0; // anything else: "gave up", reported to the peer as PEER_DISCONNECTED
}

/** What a finished pairwise handshake yields. The caller owns (and must wipe) the keys. */
export interface PairKeys {
  /** Key for messages this party sends to the peer. */
  readonly sendKey: Uint8Array;
  /** Key for messages the peer sends to this party. */
  readonly recvKey: Uint8Array;
  /** The peer's long-term key, as authenticated by its signature. */
  readonly peerIdentityKey: Uint8Array;
  /** The pair's short authentication string (six digits, `"123 456"`), equal on both ends. */
  readonly sas: string;
}

/** Everything the handshakes of one party share. */
export interface HandshakeContext {
  readonly sodium: Sodium;
  readonly inner: Transport;
  readonly identity: Identity;
  /** The session/room id, already encoded to bytes. */
  readonly sessionId: Uint8Array;
  /** Expected identity key by party index; `undefined` = accept what the peer proves (TOFU). */
  readonly pins: readonly (Uint8Array | undefined)[];
  /** `performance.now()` time by which every handshake must have finished. */
  readonly deadline: number;
  /** Fires when another pair's handshake failed, to stop waiting on this one. */
  readonly signal: AbortSignal;
}

function fail(code: TransportErrorCode, message: string, peer: number, cause?: unknown): TransportError {
  return new TransportError(code, message, cause === undefined ? { peer } : { peer, cause });
}

function writeU32(out: Uint8Array, offset: number, value: number): void {
  new DataView(out.buffer, out.byteOffset, out.byteLength).setUint32(offset, value, false);
}

function u32(value: number): Uint8Array {
  const out = new Uint8Array(4);
  writeU32(out, 0, value);
  return out;
}

/** TH: binds protocol, session, party count, both seats, both identities and both ephemerals. */
function transcriptHash(
  sodium: Sodium,
  parties: number,
  sessionId: Uint8Array,
  lo: { index: number; identityKey: Uint8Array; ephemeralKey: Uint8Array },
  hi: { index: number; identityKey: Uint8Array; ephemeralKey: Uint8Array },
): Uint8Array {
  const encoded = concatBytes([
    TRANSCRIPT_LABEL,
    u32(parties),
    u32(sessionId.length),
    sessionId,
    u32(lo.index),
    u32(hi.index),
    lo.identityKey,
    hi.identityKey,
    lo.ephemeralKey,
    hi.ephemeralKey,
  ]);
  return sodium.crypto_generichash(TRANSCRIPT_HASH_BYTES, encoded, null);
}

function signedMessage(signer: number, th: Uint8Array): Uint8Array {
  return concatBytes([SIGNATURE_LABEL, u32(signer), th]);
}

/**
 * 96 bytes of key material from the DH secret and the transcript: two BLAKE2b-512 calls keyed by
 * the shared secret over `label ‖ TH ‖ block index` (BLAKE2b's output stops at 64 bytes).
 */
function deriveKeys(sodium: Sodium, shared: Uint8Array, th: Uint8Array): Uint8Array {
  const okm = new Uint8Array(3 * TRAFFIC_KEY_BYTES);
  const first = sodium.crypto_generichash(64, concatBytes([KEYS_LABEL, th, new Uint8Array([0])]), shared);
  const second = sodium.crypto_generichash(64, concatBytes([KEYS_LABEL, th, new Uint8Array([1])]), shared);
  okm.set(first);
  okm.set(second.subarray(0, okm.length - first.length), first.length);
  wipe(first);
  wipe(second);
  return okm;
}

function confirmTag(sodium: Sodium, confirmKey: Uint8Array, party: number, th: Uint8Array): Uint8Array {
  return sodium.crypto_generichash(CONFIRM_TAG_BYTES, concatBytes([CONFIRM_LABEL, u32(party), th]), confirmKey);
}

function commitment(sodium: Sodium, sender: number, receiver: number, hello: Uint8Array): Uint8Array {
  return sodium.crypto_generichash(COMMIT_HASH_BYTES, concatBytes([COMMIT_LABEL, u32(sender), u32(receiver), hello]), null);
}

/** Six decimal digits from TH (mod 10^6 of a 64-bit value: a bias below 2^-44). */
export function shortAuthenticationString(sodium: Sodium, th: Uint8Array): string {
  const digest = sodium.crypto_generichash(32, concatBytes([SAS_LABEL, th]), null);
  const value = new DataView(digest.buffer, digest.byteOffset, 8).getBigUint64(0, false) % 1_000_000n;
  const digits = value.toString().padStart(6, '0');
  return `${digits.slice(0, 3)} ${digits.slice(3)}`;
}

/** Rejects with TIMEOUT at the deadline, and with the abort reason when `signal` fires. */
async function bounded<T>(work: Promise<T>, ctx: HandshakeContext, peer: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(fail('TIMEOUT', 'secure handshake timed out', peer)),
      Math.max(0, ctx.deadline - performance.now()),
    );
    onAbort = () => reject(fail('ABORTED', 'secure handshake abandoned', peer));
    if (ctx.signal.aborted) onAbort();
    else ctx.signal.addEventListener('abort', onAbort, { once: true });
  });
  // The losing side of the race must not become an unhandled rejection.
  work.catch(() => {});
  try {
    return await Promise.race([work, limit]);
  } finally {
    clearTimeout(timer);
    if (onAbort !== undefined) ctx.signal.removeEventListener('abort', onAbort);
  }
}

async function receive(ctx: HandshakeContext, peer: number): Promise<Uint8Array> {
  const timeoutMs = Math.max(1, Math.ceil(ctx.deadline - performance.now()));
  return bounded(ctx.inner.recv(peer, { timeoutMs, signal: ctx.signal }), ctx, peer);
}

/** Reads the next handshake message, which must be of `type` and exactly `length` bytes. */
async function receiveExpected(
  ctx: HandshakeContext,
  peer: number,
  type: number,
  length: number,
  what: string,
): Promise<Uint8Array> {
  const msg = await receive(ctx, peer);
  if (msg.length === ALERT_BYTES && msg[0] === ALERT && msg[1] === PROTOCOL_VERSION) {
    const code = ALERT_REASON[msg[2]!] ?? 'PEER_DISCONNECTED';
    throw fail(code, `peer ${peer} aborted the secure handshake (${code})`, peer);
  }
  if (msg.length < 2 || msg[0] !== type) {
    throw fail('PROTOCOL_ERROR', `expected a secure-handshake ${what} from peer ${peer}`, peer);
  }
  if (msg[1] !== PROTOCOL_VERSION) {
    throw fail('PROTOCOL_ERROR', `peer ${peer} speaks secure-channel version ${msg[1]}, not ${PROTOCOL_VERSION}`, peer);
  }
  if (msg.length !== length) {
    throw fail('PROTOCOL_ERROR', `secure-handshake ${what} from peer ${peer} has ${msg.length} bytes, not ${length}`, peer);
  }
  return msg;
}

/**
 * Runs the handshake with `peer` over `ctx.inner` and returns the traffic keys. Throws a
 * `TransportError` (with `peer` set) on any failure; sending the ALERT is the caller's job, since
 * one failure aborts every pair.
 */
export async function handshakeWithPeer(ctx: HandshakeContext, peer: number): Promise<PairKeys> {
  const { sodium, inner, identity } = ctx;
  const self = inner.party;
  const ephemeralSecret = sodium.randombytes_buf(EPHEMERAL_KEY_BYTES);
  let shared: Uint8Array | undefined;
  let okm: Uint8Array | undefined;
  try {
    const ephemeralKey = sodium.crypto_scalarmult_base(ephemeralSecret);
    const hello = new Uint8Array(HELLO_BYTES);
    hello[0] = HELLO;
    hello[1] = PROTOCOL_VERSION;
    hello.set(ephemeralKey, 2);
    hello.set(identity.publicKey, 2 + EPHEMERAL_KEY_BYTES);
    const commit = new Uint8Array(COMMIT_BYTES);
    commit[0] = COMMIT;
    commit[1] = PROTOCOL_VERSION;
    commit.set(commitment(sodium, self, peer, hello), 2);
    // Send and receive concurrently: awaiting our send first could deadlock a transport whose
    // send waits for the peer to read. Our HELLO goes out only once the peer is bound to its own.
    const [, peerCommit] = await Promise.all([
      bounded(inner.send(peer, commit), ctx, peer),
      receiveExpected(ctx, peer, COMMIT, COMMIT_BYTES, 'COMMIT'),
    ]);
    const [, peerHello] = await Promise.all([
      bounded(inner.send(peer, hello), ctx, peer),
      receiveExpected(ctx, peer, HELLO, HELLO_BYTES, 'HELLO'),
    ]);
    if (!bytesEqual(peerCommit.subarray(2), commitment(sodium, peer, self, peerHello))) {
      throw fail('AUTHENTICATION_FAILED', `peer ${peer}'s HELLO does not match its commitment`, peer);
    }
    const peerEphemeralKey = peerHello.slice(2, 2 + EPHEMERAL_KEY_BYTES);
    const peerIdentityKey = peerHello.slice(2 + EPHEMERAL_KEY_BYTES);

    const pin = ctx.pins[peer];
    if (pin !== undefined && !bytesEqual(pin, peerIdentityKey)) {
      throw fail('AUTHENTICATION_FAILED', `peer ${peer} presented an identity key other than the expected one`, peer);
    }
    if (bytesEqual(peerIdentityKey, identity.publicKey)) {
      // Our own key coming back is a reflection, never a legitimate peer.
      throw fail('AUTHENTICATION_FAILED', `peer ${peer} presented this party's own identity key`, peer);
    }
    try {
      shared = sodium.crypto_scalarmult(ephemeralSecret, peerEphemeralKey);
    } catch (err) {
      // libsodium refuses low-order points (all-zero shared secret).
      throw fail('AUTHENTICATION_FAILED', `peer ${peer} sent an invalid ephemeral key`, peer, err);
    }

    const mine = { index: self, identityKey: identity.publicKey, ephemeralKey };
    const theirs = { index: peer, identityKey: peerIdentityKey, ephemeralKey: peerEphemeralKey };
    const [lo, hi] = self < peer ? [mine, theirs] : [theirs, mine];
    const th = transcriptHash(sodium, inner.parties, ctx.sessionId, lo, hi);

    const auth = new Uint8Array(AUTH_BYTES);
    auth[0] = AUTH;
    auth[1] = PROTOCOL_VERSION;
    auth.set(sodium.crypto_sign_detached(signedMessage(self, th), identity.secretKey), 2);
    const [, peerAuth] = await Promise.all([
      bounded(inner.send(peer, auth), ctx, peer),
      receiveExpected(ctx, peer, AUTH, AUTH_BYTES, 'AUTH'),
    ]);
    const signature = peerAuth.subarray(2);
    if (!sodium.crypto_sign_verify_detached(signature, signedMessage(peer, th), peerIdentityKey)) {
      throw fail('AUTHENTICATION_FAILED', `peer ${peer}'s handshake signature does not verify`, peer);
    }

    okm = deriveKeys(sodium, shared, th);
    const confirmKey = okm.subarray(2 * TRAFFIC_KEY_BYTES);
    const confirm = new Uint8Array(CONFIRM_BYTES);
    confirm[0] = CONFIRM;
    confirm[1] = PROTOCOL_VERSION;
    confirm.set(confirmTag(sodium, confirmKey, self, th), 2);
    const [, peerConfirm] = await Promise.all([
      bounded(inner.send(peer, confirm), ctx, peer),
      receiveExpected(ctx, peer, CONFIRM, CONFIRM_BYTES, 'CONFIRM'),
    ]);
    if (!bytesEqual(peerConfirm.subarray(2), confirmTag(sodium, confirmKey, peer, th))) {
      throw fail('AUTHENTICATION_FAILED', `peer ${peer}'s key confirmation does not match`, peer);
    }

    const loToHi = okm.slice(0, TRAFFIC_KEY_BYTES);
    const hiToLo = okm.slice(TRAFFIC_KEY_BYTES, 2 * TRAFFIC_KEY_BYTES);
    const sas = shortAuthenticationString(sodium, th);
    return self < peer
      ? { sendKey: loToHi, recvKey: hiToLo, peerIdentityKey, sas }
      : { sendKey: hiToLo, recvKey: loToHi, peerIdentityKey, sas };
  } finally {
    wipe(ephemeralSecret);
    wipe(shared);
    wipe(okm);
  }
}

/** Best-effort ALERT telling `peer` why this party abandons the handshake. Never throws. */
export async function sendAlert(inner: Transport, peer: number, code: TransportErrorCode): Promise<void> {
  const alert = new Uint8Array([ALERT, PROTOCOL_VERSION, alertReasonOf(code)]);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const send = inner.send(peer, alert);
  send.catch(() => {});
  // A stuck send must not delay the failure report: the alert is only a courtesy.
  const giveUp = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, 1000);
  });
  try {
    await Promise.race([send, giveUp]);
  } catch {
    // The inner transport may already be closed; the peer will then see it disconnect.
  } finally {
    clearTimeout(timer);
  }
}
