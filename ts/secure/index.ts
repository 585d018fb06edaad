/**
 * Party identities and authenticated, encrypted channels (libsodium).
 *
 * ```ts
 * const me = await generateIdentity();            // once per party; persist exportIdentitySecret(me)
 * const inner = await connectSomehow();           // any Transport: WebRTC mesh, WebSocket, in-memory
 * const t = await secureTransport(inner, {
 *   identity: me,
 *   sessionId: roomId,                            // both ends must use the same id
 *   trust: 'pinned',
 *   peers: [keyOfParty0, keyOfParty1, keyOfParty2], // by party index; own entry may be omitted
 * });
 * await t.send(1, bytes);                         // same contract as any Transport
 * ```
 *
 * The wrapper runs one authenticated key exchange per pair of parties (`handshake.ts`), then
 * encrypts every message with per-direction keys and counters (`channel.ts`). It works the same in
 * browsers and Node: only libsodium, `TextEncoder`, timers and `performance.now()` are used.
 */
import { TransportError } from '../errors.js';
import type { Transport } from '../net/transport.js';
import { asTransportError, type PeerKeys, SecureChannel } from './channel.js';
import { handshakeWithPeer, type HandshakeContext, sendAlert } from './handshake.js';
import { checkIdentity, type Identity, PUBLIC_KEY_BYTES } from './identity.js';
import { bytesEqual, loadSodium, wipe } from './sodium.js';

export {
  disposeIdentity,
  exportIdentitySecret,
  generateIdentity,
  IDENTITY_SEED_BYTES,
  type Identity,
  importIdentitySecret,
  PUBLIC_KEY_BYTES,
  publicKeyFromBase64,
  publicKeyFromHex,
  publicKeyToBase64,
  publicKeyToHex,
  SECRET_KEY_BYTES,
} from './identity.js';
export { PROTOCOL_VERSION } from './handshake.js';
export { SEGMENT_BYTES } from './channel.js';

/**
 * How peers' identity keys are checked.
 * - `'pinned'`: every peer must present exactly the key given in `peers` for its index.
 * - `'tofu'` (trust on first use): a peer with no entry in `peers` is accepted with whatever key
 *   it proves possession of; the keys seen are returned in {@link SecureTransport.peerKeys} so the
 *   app can pin them next time. Entries that are given are still enforced.
 *
 * There is no default: accepting unknown keys must be a visible decision in the app's code.
 */
export type TrustMode = 'pinned' | 'tofu';

/** Default for {@link SecureTransportOptions.handshakeTimeoutMs}. */
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 15_000;
/** Longest accepted session id, in bytes: it is an identifier, not a payload. */
export const MAX_SESSION_ID_BYTES = 1024;

export interface SecureTransportOptions {
  /** This party's long-term key pair. */
  identity: Identity;
  /**
   * The room/session id every party of this session uses (a string is UTF-8 encoded). It is
   * bound into each handshake, so a party in another session cannot be spliced in.
   */
  sessionId: string | Uint8Array;
  /** See {@link TrustMode}. Required. */
  trust: TrustMode;
  /**
   * Expected Ed25519 public key (32 bytes) of each party, by party index; `parties` entries.
   * Required with `'pinned'` (the own entry may be `undefined`/`null`, or must equal the own
   * public key). Optional with `'tofu'`, where missing entries are learnt.
   */
  peers?: readonly (Uint8Array | null | undefined)[];
  /** Deadline for all pairwise handshakes together; default {@link DEFAULT_HANDSHAKE_TIMEOUT_MS}. */
  handshakeTimeoutMs?: number;
  /** Cancels the handshake (rejects with `ABORTED` and closes `inner`). */
  signal?: AbortSignal;
}

/** A Transport whose traffic is authenticated and encrypted. */
export interface SecureTransport extends Transport {
  /** The trust mode the handshake ran under. */
  readonly trust: TrustMode;
  /**
   * Every party's long-term public key by index (own included), as proven in the handshake:
   * under `'tofu'`, what the app should store and pin next time.
   */
  readonly peerKeys: readonly Uint8Array[];
}

class SecureTransportImpl extends SecureChannel implements SecureTransport {
  readonly trust: TrustMode;
  readonly #peerKeys: readonly Uint8Array[];

  constructor(
    sodium: Awaited<ReturnType<typeof loadSodium>>,
    inner: Transport,
    keys: readonly (PeerKeys | undefined)[],
    trust: TrustMode,
    peerKeys: readonly Uint8Array[],
  ) {
    super(sodium, inner, keys);
    this.trust = trust;
    this.#peerKeys = peerKeys;
  }

  get peerKeys(): readonly Uint8Array[] {
    // Copies, so the app cannot alter what it was told.
    return this.#peerKeys.map((k) => k.slice());
  }
}

function invalid(message: string): TransportError {
  return new TransportError('INVALID_ARGUMENT', message);
}

/** Validates the options and returns the pins by party index. Throws `INVALID_ARGUMENT`. */
function checkOptions(inner: Transport, opts: SecureTransportOptions): (Uint8Array | undefined)[] {
  if (opts === null || typeof opts !== 'object') throw invalid('secureTransport: options are required');
  checkIdentity(opts.identity, 'identity');
  const { trust, peers } = opts;
  if (trust !== 'pinned' && trust !== 'tofu') {
    throw invalid("secureTransport: trust must be chosen explicitly: 'pinned' (with peers) or 'tofu'");
  }
  if (opts.signal !== undefined && !(opts.signal instanceof AbortSignal)) {
    throw invalid('secureTransport: signal must be an AbortSignal');
  }
  const timeout = opts.handshakeTimeoutMs;
  if (timeout !== undefined && !(typeof timeout === 'number' && timeout > 0 && Number.isFinite(timeout))) {
    throw invalid('secureTransport: handshakeTimeoutMs must be a positive finite number');
  }
  const { party, parties } = inner;
  if (!Number.isInteger(parties) || parties < 2 || !Number.isInteger(party) || party < 0 || party >= parties) {
    throw invalid('secureTransport: the inner transport has an invalid party/parties');
  }
  if (trust === 'pinned' && peers === undefined) {
    throw invalid("secureTransport: trust 'pinned' needs peers (the expected public key of every party)");
  }
  const pins: (Uint8Array | undefined)[] = new Array<Uint8Array | undefined>(parties).fill(undefined);
  if (peers === undefined) return pins;
  if (!Array.isArray(peers) || peers.length !== parties) {
    throw invalid(`secureTransport: peers must have one entry per party (${parties})`);
  }
  for (let i = 0; i < parties; i++) {
    const key = peers[i];
    if (key === undefined || key === null) {
      if (trust === 'pinned' && i !== party) throw invalid(`secureTransport: peers[${i}] is missing`);
      continue;
    }
    if (!(key instanceof Uint8Array) || key.length !== PUBLIC_KEY_BYTES) {
      throw invalid(`secureTransport: peers[${i}] must be a ${PUBLIC_KEY_BYTES}-byte Uint8Array`);
    }
    if (i === party) {
      if (!bytesEqual(key, opts.identity.publicKey)) {
        throw invalid(`secureTransport: peers[${i}] is this party's entry but is not its public key`);
      }
      continue;
    }
    pins[i] = key.slice();
  }
  return pins;
}

function encodeSessionId(sessionId: unknown): Uint8Array {
  let bytes: Uint8Array;
  if (typeof sessionId === 'string') bytes = new TextEncoder().encode(sessionId);
  else if (sessionId instanceof Uint8Array) bytes = sessionId.slice();
  else throw invalid('secureTransport: sessionId must be a string or a Uint8Array');
  if (bytes.length === 0 || bytes.length > MAX_SESSION_ID_BYTES) {
    throw invalid(`secureTransport: sessionId must be 1 to ${MAX_SESSION_ID_BYTES} bytes`);
  }
  return bytes;
}

/**
 * Wraps `inner` in authenticated encryption. Runs the handshake with every other party (all
 * pairs at once) and resolves with a {@link SecureTransport} once all succeeded; it then owns
 * `inner` and closes it on close or failure.
 *
 * Rejects with `TransportError`:
 * - `INVALID_ARGUMENT` for bad options (including no explicit `trust`); `inner` is left open;
 * - `AUTHENTICATION_FAILED` (wrong identity key, bad signature, different session id, a relay
 *   that swapped keys), `PROTOCOL_ERROR` (malformed handshake message), `TIMEOUT`, or whatever
 *   the inner transport failed with; `inner` is then closed (gracefully, after an ALERT to every
 *   peer whose handshake had not finished, so that those peers fail with the same code).
 */
export async function secureTransport(inner: Transport, opts: SecureTransportOptions): Promise<SecureTransport> {
  const sodium = await loadSodium();
  const pins = checkOptions(inner, opts);
  const sessionId = encodeSessionId(opts.sessionId);
  const abort = new AbortController();
  let firstError: TransportError | undefined;
  const onCancel = (): void => {
    firstError ??= new TransportError('ABORTED', 'secure handshake cancelled');
    abort.abort();
  };
  if (opts.signal?.aborted) onCancel();
  else opts.signal?.addEventListener('abort', onCancel, { once: true });
  const ctx: HandshakeContext = {
    sodium,
    inner,
    identity: opts.identity,
    sessionId,
    pins,
    deadline: performance.now() + (opts.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS),
    signal: abort.signal,
  };

  const keys: (PeerKeys | undefined)[] = new Array<PeerKeys | undefined>(inner.parties).fill(undefined);
  const peerKeys: Uint8Array[] = new Array<Uint8Array>(inner.parties).fill(opts.identity.publicKey.slice());
  const finished = new Array<boolean>(inner.parties).fill(false);
  finished[inner.party] = true;

  const handshakes: Promise<void>[] = [];
  for (let peer = 0; peer < inner.parties; peer++) {
    if (peer === inner.party) continue;
    handshakes.push(
      handshakeWithPeer(ctx, peer).then(
        (result) => {
          keys[peer] = { sendKey: result.sendKey, recvKey: result.recvKey };
          peerKeys[peer] = result.peerIdentityKey;
          finished[peer] = true;
        },
        (err: unknown) => {
          // The first failure is the one reported; the others are its consequences (aborted waits).
          if (firstError === undefined) {
            firstError = asTransportError(err, peer);
            abort.abort();
          }
        },
      ),
    );
  }
  await Promise.all(handshakes);
  opts.signal?.removeEventListener('abort', onCancel);

  if (firstError !== undefined) {
    const error = firstError;
    await Promise.all(
      finished.map((done, peer) => (done ? Promise.resolve() : sendAlert(inner, peer, error.code))),
    );
    for (const k of keys) {
      wipe(k?.sendKey);
      wipe(k?.recvKey);
    }
    // A graceful close, so the ALERTs just sent are delivered before the peers see us leave:
    // an abortive close lets a transport drop queued messages, and the peers would report a
    // disconnection instead of the real cause.
    await inner.close().catch(() => {});
    throw error;
  }
  return new SecureTransportImpl(sodium, inner, keys, opts.trust, peerKeys);
}
