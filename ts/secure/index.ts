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
 * Without keys to pin, let the people compare a short authentication string instead:
 *
 * ```ts
 * const t = await secureTransport(inner, {
 *   identity: me, sessionId: roomId, trust: 'confirm',
 *   // Show each peer's SAS (and key fingerprint); resolve true only if the person confirms that
 *   // the other side shows the same. Resolves once every party has confirmed.
 *   confirm: async (peers) => askUser(peers.map((p) => `party ${p.party}: ${p.sas}`)),
 * });
 * ```
 *
 * The wrapper runs one authenticated key exchange per pair of parties (`handshake.ts`), then
 * encrypts every message with per-direction keys and counters (`channel.ts`). It works the same in
 * browsers and Node: only libsodium, `TextEncoder`, timers and `performance.now()` are used.
 *
 * Until every peer is authenticated the inner transport accepts nothing larger than a handshake
 * message, and afterwards nothing larger than one encrypted segment; decrypted messages are
 * capped at `maxMessageBytes` (64 MiB). So a party that is not (yet) authenticated cannot make
 * this one buffer more than the inner transport's flow-control window.
 */
import { TransportError } from '../errors.js';
import type { Transport } from '../net/transport.js';
import {
  asTransportError,
  DEFAULT_MAX_MESSAGE_BYTES,
  DEFAULT_RECV_TIMEOUT_MS,
  MAX_RECORD_BYTES,
  type PeerKeys,
  SecureChannel,
} from './channel.js';
import { handshakeWithPeer, type HandshakeContext, MAX_HANDSHAKE_MESSAGE_BYTES, sendAlert } from './handshake.js';
import { checkIdentity, type Identity, PUBLIC_KEY_BYTES, publicKeyToHex } from './identity.js';
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
export { DEFAULT_MAX_MESSAGE_BYTES, SEGMENT_BYTES } from './channel.js';

/**
 * How peers' identity keys are checked.
 * - `'pinned'`: every peer must present exactly the key given in `peers` for its index. The
 *   right mode for scripts and services: nothing to ask anyone.
 * - `'confirm'`: peers may present unknown keys (entries given in `peers` are still enforced),
 *   but the channel is only handed to the app once the `confirm` callback of *every* party has
 *   resolved true — typically after a person compared the short authentication strings
 *   ({@link PeerVerification.sas}) with the other side over a channel they trust (in person, a
 *   call). A relay in the middle makes the strings differ (it succeeds only with probability
 *   10^-6 per attempt; see `handshake.ts`), so nothing the app sends afterwards reaches it.
 * - `'tofu'` (trust on first use): a peer with no entry in `peers` is accepted with whatever key
 *   it proves possession of, **with no check at all**: anyone who reaches the room (a squatter in
 *   the signaling room, or a relay running one handshake with each side) gets the channel. Only
 *   for experiments, or when the keys are compared out of band before anything secret is sent;
 *   the keys seen are in {@link SecureTransport.peerKeys} for pinning next time.
 *
 * There is no default: accepting unknown keys must be a visible decision in the app's code.
 */
export type TrustMode = 'pinned' | 'confirm' | 'tofu';

/** What a person needs to check one peer: shown by `confirm` and kept on the transport. */
export interface PeerVerification {
  /** The peer's party index. */
  readonly party: number;
  /** The peer's long-term Ed25519 public key, as proven in the handshake. */
  readonly publicKey: Uint8Array;
  /** {@link publicKeyToHex} of `publicKey`: the full fingerprint, to pin next time. */
  readonly fingerprint: string;
  /**
   * The pair's short authentication string, six digits as `"123 456"`: the same on both ends of
   * an honest connection, different (with probability 1 − 10^-6) if anything sits in between.
   * Public: it may be shown, read aloud or logged.
   */
  readonly sas: string;
  /** Whether the key was pinned through `peers` (then it needs no confirmation). */
  readonly pinned: boolean;
}

/** Default for {@link SecureTransportOptions.confirmTimeoutMs}: five minutes for people to compare. */
export const DEFAULT_CONFIRM_TIMEOUT_MS = 300_000;

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
  /**
   * Required with `'confirm'` (ignored otherwise): called once, after every handshake succeeded,
   * with one entry per other party in index order. Resolve true to accept them all; false (or a
   * rejection) refuses, and every party then fails with `AUTHENTICATION_FAILED`. `signal` fires
   * when the answer is no longer needed (a peer refused or left, the deadline passed, the app
   * cancelled): take the question down then. Do not block the event loop meanwhile (no
   * `window.confirm`): keepalives must keep flowing.
   */
  confirm?: (peers: readonly PeerVerification[], options: { signal: AbortSignal }) => boolean | Promise<boolean>;
  /**
   * With `'confirm'`: how long (ms) this party waits for its own and every peer's decision;
   * default {@link DEFAULT_CONFIRM_TIMEOUT_MS}. Past it, `TIMEOUT`.
   */
  confirmTimeoutMs?: number;
  /** Deadline for all pairwise handshakes together; default {@link DEFAULT_HANDSHAKE_TIMEOUT_MS}. */
  handshakeTimeoutMs?: number;
  /**
   * Largest decrypted message accepted from a peer (checked before it is allocated); default
   * {@link DEFAULT_MAX_MESSAGE_BYTES} (64 MiB), the most a protocol accepts.
   */
  maxMessageBytes?: number;
  /** Default `recv` deadline (ms) when a call gives none; default 60000, as on `ts/net` transports. */
  recvTimeoutMs?: number;
  /** Cancels the handshake (rejects with `ABORTED` and closes `inner`). */
  signal?: AbortSignal;
}

/** A Transport whose traffic is authenticated and encrypted. */
export interface SecureTransport extends Transport {
  /** The trust mode the handshake ran under. */
  readonly trust: TrustMode;
  /**
   * Every party's long-term public key by index (own included), as proven in the handshake:
   * under `'tofu'` and `'confirm'`, what the app should store and pin next time.
   */
  readonly peerKeys: readonly Uint8Array[];
  /** Per other party (index order): its key, fingerprint and SAS, e.g. to show in a UI. */
  readonly verifications: readonly PeerVerification[];
}

class SecureTransportImpl extends SecureChannel implements SecureTransport {
  readonly trust: TrustMode;
  readonly #peerKeys: readonly Uint8Array[];
  readonly #verifications: readonly PeerVerification[];

  constructor(
    sodium: Awaited<ReturnType<typeof loadSodium>>,
    inner: Transport,
    keys: readonly (PeerKeys | undefined)[],
    trust: TrustMode,
    peerKeys: readonly Uint8Array[],
    verifications: readonly PeerVerification[],
    limits: { maxMessageBytes: number; recvTimeoutMs: number },
  ) {
    super(sodium, inner, keys, limits);
    this.trust = trust;
    this.#peerKeys = peerKeys;
    this.#verifications = verifications;
  }

  get peerKeys(): readonly Uint8Array[] {
    // Copies, so the app cannot alter what it was told.
    return this.#peerKeys.map((k) => k.slice());
  }

  get verifications(): readonly PeerVerification[] {
    return this.#verifications.map((v) => ({ ...v, publicKey: v.publicKey.slice() }));
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
  if (trust !== 'pinned' && trust !== 'confirm' && trust !== 'tofu') {
    throw invalid("secureTransport: trust must be chosen explicitly: 'pinned' (with peers), 'confirm' (with confirm) or 'tofu'");
  }
  if (trust === 'confirm' && typeof opts.confirm !== 'function') {
    throw invalid("secureTransport: trust 'confirm' needs a confirm callback");
  }
  for (const name of ['handshakeTimeoutMs', 'confirmTimeoutMs', 'maxMessageBytes', 'recvTimeoutMs'] as const) {
    const value = opts[name];
    if (value !== undefined && !(typeof value === 'number' && value > 0 && Number.isFinite(value))) {
      throw invalid(`secureTransport: ${name} must be a positive finite number`);
    }
  }
  if (opts.signal !== undefined && !(opts.signal instanceof AbortSignal)) {
    throw invalid('secureTransport: signal must be an AbortSignal');
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
 *   that swapped keys; under `'confirm'`, a party that did not confirm), `PROTOCOL_ERROR`
 *   (malformed handshake message), `TIMEOUT`, or whatever the inner transport failed with;
 *   `inner` is then closed (after an ALERT or an abort to every peer, so that they fail with the
 *   same code rather than wait).
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
  // Nothing larger than a handshake message until the four of them arrived from a peer (an ALERT
  // ends the handshake), then nothing larger than one encrypted segment.
  inner.limitMessageBytes?.(MAX_RECORD_BYTES, { messages: 4, maxBytes: MAX_HANDSHAKE_MESSAGE_BYTES });
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
  const verifications: PeerVerification[] = [];

  const handshakes: Promise<void>[] = [];
  for (let peer = 0; peer < inner.parties; peer++) {
    if (peer === inner.party) continue;
    handshakes.push(
      handshakeWithPeer(ctx, peer).then(
        (result) => {
          keys[peer] = { sendKey: result.sendKey, recvKey: result.recvKey };
          peerKeys[peer] = result.peerIdentityKey;
          verifications.push({
            party: peer,
            publicKey: result.peerIdentityKey.slice(),
            fingerprint: publicKeyToHex(result.peerIdentityKey),
            sas: result.sas,
            pinned: pins[peer] !== undefined,
          });
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
  verifications.sort((a, b) => a.party - b.party);
  const transport = new SecureTransportImpl(sodium, inner, keys, opts.trust, peerKeys, verifications, {
    maxMessageBytes: opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    recvTimeoutMs: opts.recvTimeoutMs ?? DEFAULT_RECV_TIMEOUT_MS,
  });
  if (opts.trust === 'confirm') await confirmAll(transport, opts);
  return transport;
}

/** Every party's decision, sent over the fresh channel: accept or refuse the peers it was shown. */
const DECISION_TAG = 0xc5;
const ACCEPT = Uint8Array.of(DECISION_TAG, 1);
const REFUSE = Uint8Array.of(DECISION_TAG, 0);

/**
 * The `'confirm'` step: asks this party's `confirm`, tells every peer the answer over the
 * encrypted channel, and waits for every peer's answer. Resolves only if all accepted; otherwise
 * closes `transport` (telling the peers why) and rejects with `AUTHENTICATION_FAILED` (or
 * `TIMEOUT`, `ABORTED`, or the transport's failure).
 */
async function confirmAll(transport: SecureTransportImpl, opts: SecureTransportOptions): Promise<void> {
  const timeoutMs = opts.confirmTimeoutMs ?? DEFAULT_CONFIRM_TIMEOUT_MS;
  const peers = transport.verifications.map((v) => v.party);
  const refused = (message: string, peer?: number, cause?: unknown) =>
    new TransportError('AUTHENTICATION_FAILED', message, {
      ...(peer === undefined ? {} : { peer }),
      ...(cause === undefined ? {} : { cause }),
    });
  const fail = async (error: TransportError): Promise<never> => {
    await transport.close(error);
    throw error;
  };
  // The peers' answers are read while this party's person decides, so none is missed. Each
  // resolves with the reason the peer is not on board, or undefined if it accepted.
  const answers = peers.map((peer) =>
    transport.recv(peer, { timeoutMs }).then(
      (answer): TransportError | undefined => {
        if (answer.length === 2 && answer[0] === DECISION_TAG && answer[1] === 1) return undefined;
        if (answer.length === 2 && answer[0] === DECISION_TAG && answer[1] === 0) {
          return refused(`party ${peer} did not confirm the short authentication string`, peer);
        }
        return new TransportError('PROTOCOL_ERROR', `party ${peer} sent something other than its confirmation`, { peer });
      },
      (err: unknown): TransportError => {
        const error = asTransportError(err, peer);
        // A peer that refused closes right after saying so; its close may overtake the answer.
        if (error.remote?.code === 'AUTHENTICATION_FAILED') {
          return refused(`party ${peer} did not confirm the short authentication string`, peer, error);
        }
        return error;
      },
    ),
  );

  // This party's decision, unless a peer refuses or fails first, the deadline passes, or the
  // app cancels.
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onCancel: (() => void) | undefined;
  const question = new AbortController();
  const decision = await new Promise<boolean | TransportError>((resolve) => {
    timer = setTimeout(() => resolve(new TransportError('TIMEOUT', `no confirmation within ${timeoutMs} ms`)), timeoutMs);
    onCancel = () => resolve(new TransportError('ABORTED', 'secure handshake cancelled'));
    if (opts.signal?.aborted) onCancel();
    else opts.signal?.addEventListener('abort', onCancel, { once: true });
    for (const answer of answers) void answer.then((error) => error && resolve(error));
    Promise.resolve()
      .then(() => opts.confirm!(transport.verifications, { signal: question.signal }))
      .then(
        (ok) => resolve(ok === true),
        (err: unknown) => resolve(refused('the confirm callback failed', undefined, err)),
      );
  });
  clearTimeout(timer);
  if (onCancel) opts.signal?.removeEventListener('abort', onCancel);
  // Decided without (or before) this party's answer: the question is moot.
  question.abort();

  if (decision !== true) {
    const error = decision === false ? refused('the short authentication strings were not confirmed') : decision;
    if (error.peer === undefined) {
      // Our own refusal: say so over the channel (best effort, briefly), then abort with it.
      let wait: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.allSettled(peers.map((peer) => transport.send(peer, REFUSE))),
        new Promise((resolve) => {
          wait = setTimeout(resolve, 500);
        }),
      ]);
      clearTimeout(wait);
    }
    return fail(error);
  }
  try {
    await Promise.all(peers.map((peer) => transport.send(peer, ACCEPT)));
  } catch (err) {
    return fail(asTransportError(err, undefined));
  }
  for (const answer of answers) {
    const error = await answer;
    if (error) return fail(error);
  }
}
