/**
 * A full mesh of WebRTC data channels between n parties, over the W3C API only, so the browser
 * (native `RTCPeerConnection`) and Node (an injected polyfill, see node.ts) run the same code.
 *
 * Each pair gets one peer connection carrying one ordered, reliable, pre-negotiated data channel
 * (id 0, so neither side waits for an in-band `datachannel` event). The lower party index offers,
 * the higher answers; descriptions and ICE candidates travel through the signaling server, which
 * the party leaves as soon as its mesh is up.
 *
 * A peer that goes away is noticed: at once when it closes (its abort frame, or the data
 * channel closing), and within `peerTimeoutMs` (default 3 s, see `framed.ts`) when it is killed or
 * its network dies, through the keepalives. In a browser the transport also aborts on `pagehide`
 * (tab closed, reloaded or navigated away), so the peers learn of it at once rather than at their
 * silence timeout; `closeOnPageHide: false` turns that off.
 *
 * ## Throughput: where Chromium's limit is
 * In Chromium the data channel, not this code, is the bottleneck, and it is CPU-bound inside the
 * browser. Its SCTP stack sends packets of at most ~1.2 KB (measured: 873 UDP packets sent and 437
 * acknowledgements received per MB, whatever the message size), and every packet crosses from the
 * renderer to the browser's network service and back over IPC, all on that service's one IO
 * thread. On the 2-core test VM (`npm run bench -- transport`, `scripts/bench/transport-knobs.mjs`)
 * two tabs spend 60–80 ms of CPU per MB between them, 26–33 ms/MB of it on that single thread, so
 * they cannot pass ~30 MB/s on two idle cores nor ~40 MB/s with any number of cores; a Chromium
 * tab and a Node party spend 50–65 ms/MB, 16–21 ms/MB on the thread (≤ ~60 MB/s). Bare data
 * channels without our framing cost the same. Nothing a page controls changed the CPU per MB
 * beyond noise: message size 16–256 KiB, `bufferedAmount` high-water 256 KiB–8 MiB, 1–4 channels
 * with messages striped over them, unordered channels, two peer connections per pair, a receive
 * window of 1–32 MiB. So each pair keeps one ordered channel with 64 KiB frames and a 1 MiB
 * high-water mark. (node-datachannel can send larger packets, its `mtu` option, but a flood
 * from Node to Chromium stalled at an MTU of 4000 where 1400 worked.) Chromium's WebSockets are
 * cheaper: the same tabs through the
 * relay (`relay.ts`, itself a Node process on the path) spend 45–65 ms/MB, a tab and Node 25–35.
 *
 * Browser-safe: no Node imports.
 */
import type { TransportError } from '../errors.js';
import { checkPartyCount, transportError } from './base.js';
import { FramedTransport, type FrameLink, type FramedOptions } from './framed.js';
import { SignalingClient, checkRoomName } from './signaling-client.js';
import type { IceServerConfig, SignalData } from './signaling-protocol.js';
import type { Transport } from './transport.js';
import { defaultWebSocket, type WebSocketConstructor } from './websocket-like.js';

/** The constructor of `RTCPeerConnection`: the browser's, or a W3C-compatible polyfill's. */
// Typed loosely on purpose: the published declarations must type-check without the DOM lib (Node
// apps), and both the browser's constructor and W3C polyfills fit this shape.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type RTCPeerConnectionConstructor = new (configuration?: any) => object;

/** The DOM's view of the same constructor, used inside this module. */
type DomPeerConnectionConstructor = new (configuration?: RTCConfiguration) => RTCPeerConnection;

export interface WebRtcMeshOptions extends FramedOptions {
  /** The signaling server, e.g. `ws://127.0.0.1:8787`. */
  signalingUrl: string;
  /** Room id shared by the session's parties (letters, digits, `_.-`; up to 128). */
  room: string;
  party: number;
  parties: number;
  /** STUN/TURN servers; default: those the signaling server hands out (none on a LAN). */
  iceServers?: IceServerConfig[];
  /** Default: `globalThis.RTCPeerConnection` (browsers). */
  RTCPeerConnection?: RTCPeerConnectionConstructor;
  /** Default: `globalThis.WebSocket`. */
  WebSocket?: WebSocketConstructor;
  /** Deadline (ms) for the whole mesh to be up. Default 30000. */
  connectTimeoutMs?: number;
  /** Cancels connecting (rejects with `ABORTED`). */
  signal?: AbortSignal;
  /**
   * Told how each other party comes along while the mesh connects, so an app can show "waiting
   * for party 2", "connected to party 1": `'present'` when it is (or comes) in the room,
   * `'connected'` when its data channel opens. (A party that leaves before connecting fails the
   * connect, or is waited for until the deadline.) Not called once the mesh is up or has failed;
   * a callback that throws is ignored.
   */
  onPeer?: (peer: number, state: MeshPeerState) => void;
  /**
   * In a browser, abort the transport (telling the peers) when the page is hidden for good
   * (`pagehide`: tab closed, reload, navigation). Default true. No effect outside browsers.
   */
  closeOnPageHide?: boolean;
}

/** The page-lifecycle events of a browser window, where there is one. */
interface PageEvents {
  addEventListener(type: 'pagehide', listener: () => void): void;
  removeEventListener(type: 'pagehide', listener: () => void): void;
}

function pageEvents(): PageEvents | undefined {
  const g = globalThis as { addEventListener?: unknown; document?: unknown };
  return typeof g.addEventListener === 'function' && typeof g.document === 'object' ? (g as unknown as PageEvents) : undefined;
}

/** How one other party stands while the mesh connects (see {@link WebRtcMeshOptions.onPeer}). */
export type MeshPeerState = 'present' | 'connected';

interface PeerState {
  pc: RTCPeerConnection;
  /**
   * Created by the offerer before its offer and by the answerer only after the offer is set:
   * libdatachannel negotiates on its own when a channel appears, and an answerer's channel
   * created first would make it offer too (glare).
   */
  channel: RTCDataChannel | undefined;
  /** Signals from this peer, applied one at a time (each step awaits the peer connection). */
  chain: Promise<void>;
  /** Candidates that arrived before the remote description. */
  earlyCandidates: RTCIceCandidateInit[];
  /**
   * The offerer's own candidates, held back until the answer is applied. Otherwise the answerer
   * can reach us and start DTLS before we know its certificate fingerprint, and libdatachannel
   * then fails the handshake ("unknown CA"); seen under CPU load, when the answer lags.
   */
  heldCandidates: SignalData[];
  haveRemote: boolean;
  open: boolean;
}

const DEFAULT_HIGH_WATER = 1024 * 1024;

/**
 * Connects this party to every other party of `room` and resolves once all `parties - 1` data
 * channels are open (the ready barrier). Rejects with `SIGNALING_FAILED`, `TIMEOUT`,
 * `PEER_DISCONNECTED` or `ABORTED`, having released everything it opened.
 */
export async function connectMesh(options: WebRtcMeshOptions): Promise<Transport> {
  const { party, parties, room } = options;
  checkPartyCount(party, parties);
  checkRoomName(room);
  const PeerConnection = (options.RTCPeerConnection ??
    (globalThis as { RTCPeerConnection?: RTCPeerConnectionConstructor }).RTCPeerConnection) as
    | DomPeerConnectionConstructor
    | undefined;
  if (!PeerConnection) {
    // A browser without WebRTC (WebKitGTK as Debian builds it, some embedded webviews) cannot do
    // this at all: say so at once rather than time out. Elsewhere (Node) the caller forgot to
    // pass the polyfill.
    if (pageEvents()) {
      throw transportError(
        'UNSUPPORTED',
        'this browser has no WebRTC (RTCPeerConnection is not defined), so it cannot join a WebRTC mesh; connect through the relay (connectRelay) instead',
      );
    }
    throw transportError('INVALID_ARGUMENT', 'no RTCPeerConnection: pass one (in Node, use the webmpc/net node entry)');
  }
  const WebSocketImpl = defaultWebSocket(options.WebSocket);
  const connectTimeoutMs = options.connectTimeoutMs ?? 30_000;
  const highWater = options.highWaterBytes ?? DEFAULT_HIGH_WATER;

  const transport = new FramedTransport(party, parties, options);
  const peers = new Map<number, PeerState>();
  const page = options.closeOnPageHide === false ? undefined : pageEvents();
  // Queues the abort frame synchronously, while the page can still send.
  const onPageHide = () => void transport.close(transportError('ABORTED', 'the page was closed'));
  page?.addEventListener('pagehide', onPageHide);
  transport.addReleaseHook(() => {
    page?.removeEventListener('pagehide', onPageHide);
    for (const peer of peers.values()) peer.pc.close();
    peers.clear();
  });
  // Ends the signaling join when connecting fails or is cancelled, so nothing lingers.
  const stopJoining = new AbortController();

  let signaling: SignalingClient | undefined;
  let settle!: { resolve: () => void; reject: (error: TransportError) => void };
  const ready = new Promise<void>((resolve, reject) => {
    settle = { resolve, reject };
  });
  let settled = false;
  let iceServers: IceServerConfig[] = options.iceServers ?? [];

  const report = (peer: number, state: MeshPeerState) => {
    if (settled) return;
    try {
      options.onPeer?.(peer, state);
    } catch {
      // The app's display must not break the connection.
    }
  };

  const fail = (error: TransportError) => {
    // After the barrier, failures are the transport's to report (through the channels).
    if (settled) return;
    settled = true;
    settle.reject(error);
  };

  const link = (channel: RTCDataChannel): FrameLink => ({
    send: (frame) => channel.send(frame),
    get bufferedAmount() {
      return channel.bufferedAmount;
    },
    onDrain: (wake) => {
      channel.addEventListener('bufferedamountlow', wake);
      return () => channel.removeEventListener('bufferedamountlow', wake);
    },
    close: (graceful, timeoutMs) => closeChannel(channel, graceful, timeoutMs),
  });

  const peerState = (peer: number): PeerState => {
    const existing = peers.get(peer);
    if (existing) return existing;
    const pc = new PeerConnection({ iceServers: iceServers as RTCIceServer[] });
    const state: PeerState = {
      pc,
      channel: undefined,
      chain: Promise.resolve(),
      earlyCandidates: [],
      heldCandidates: [],
      haveRemote: false,
      open: false,
    };
    peers.set(peer, state);
    pc.onicecandidate = (event) => {
      const c = event.candidate;
      // An empty candidate string marks the end of gathering; peers need not be told.
      if (c && c.candidate) {
        const data: SignalData = { kind: 'candidate', candidate: c.candidate, sdpMid: c.sdpMid, sdpMLineIndex: c.sdpMLineIndex };
        if (peer > party && !state.haveRemote) state.heldCandidates.push(data);
        else signaling?.send(peer, data);
      }
    };
    pc.onconnectionstatechange = () => {
      if (pc.connectionState === 'failed' || pc.connectionState === 'closed') {
        if (state.open) transport.linkClosed(peer);
        else fail(transportError('PEER_DISCONNECTED', `WebRTC connection to party ${peer} ${pc.connectionState}`, peer));
      }
    };
    return state;
  };

  const openChannel = (peer: number, state: PeerState) => {
    const channel = state.pc.createDataChannel('webmpc', { negotiated: true, id: 0, ordered: true });
    state.channel = channel;
    channel.binaryType = 'arraybuffer';
    channel.bufferedAmountLowThreshold = highWater / 4;
    channel.onopen = () => {
      state.open = true;
      report(peer, 'connected');
      transport.attach(peer, link(channel));
      if (transport.complete && !settled) {
        settled = true;
        settle.resolve();
      }
    };
    channel.onmessage = (event: MessageEvent) => {
      const data: unknown = event.data;
      if (data instanceof ArrayBuffer) transport.receiveFrame(peer, new Uint8Array(data));
      else transport.receiveFrame(peer, new Uint8Array(0)); // Text is not a frame: protocol error.
    };
    channel.onclose = () => {
      if (state.open) transport.linkClosed(peer);
    };
  };

  const enqueue = (peer: number, step: (state: PeerState) => Promise<void>) => {
    const state = peerState(peer);
    state.chain = state.chain
      .then(() => step(state))
      .catch((cause: unknown) => {
        fail(transportError('SIGNALING_FAILED', `WebRTC negotiation with party ${peer} failed`, peer, cause));
      });
  };

  const offerTo = (peer: number) =>
    enqueue(peer, async (state) => {
      const { pc } = state;
      openChannel(peer, state);
      const offer = await pc.createOffer();
      // libdatachannel's polyfill has already applied the offer it generated (it negotiates on
      // its own); applying it again makes it renegotiate, racing with the answer.
      if (pc.signalingState !== 'have-local-offer') await pc.setLocalDescription(offer);
      // The offer itself, not pc.localDescription: the polyfill's getter never returns null and
      // may reflect a later renegotiation.
      signaling?.send(peer, { kind: 'description', type: 'offer', sdp: offer.sdp ?? '' });
    });

  const onSignal = (from: number, data: SignalData) => {
    if (settled) return;
    if (data.kind === 'description') {
      // Lower index offers: an offer from above or an answer from below breaks the protocol.
      const expected = from < party ? 'offer' : 'answer';
      if (data.type !== expected || (data.type === 'answer' && !peers.has(from))) {
        fail(transportError('SIGNALING_FAILED', `unexpected ${data.type} from party ${from}`, from));
        return;
      }
      enqueue(from, async (state) => {
        if (state.haveRemote) throw new Error('second remote description');
        await state.pc.setRemoteDescription({ type: data.type, sdp: data.sdp });
        state.haveRemote = true;
        if (data.type === 'offer') openChannel(from, state);
        for (const held of state.heldCandidates.splice(0)) signaling?.send(from, held);
        for (const candidate of state.earlyCandidates.splice(0)) await addCandidate(state.pc, candidate);
        if (data.type === 'offer') {
          const answer = await state.pc.createAnswer();
          await state.pc.setLocalDescription(answer);
          signaling?.send(from, { kind: 'description', type: 'answer', sdp: answer.sdp ?? '' });
        }
      });
      return;
    }
    const candidate: RTCIceCandidateInit = { candidate: data.candidate, sdpMid: data.sdpMid, sdpMLineIndex: data.sdpMLineIndex };
    enqueue(from, async (state) => {
      if (state.haveRemote) await addCandidate(state.pc, candidate);
      else state.earlyCandidates.push(candidate);
    });
  };

  /** Parties seen in the room, for the timeout's message. */
  const seen = new Set<number>();
  /** Says who is missing: parties that never joined the room, and joined ones not connected. */
  const meshTimeoutMessage = (): string => {
    const others = [...Array(parties).keys()].filter((p) => p !== party && !peers.get(p)?.open);
    const absent = others.filter((p) => !seen.has(p) && !peers.get(p)?.haveRemote);
    const stuck = others.filter((p) => !absent.includes(p));
    const who = (ps: number[]) => `part${ps.length === 1 ? 'y' : 'ies'} ${ps.join(', ')}`;
    const why = [
      absent.length > 0 && `${who(absent)} never joined room '${room}' on ${options.signalingUrl}`,
      stuck.length > 0 && `the WebRTC connection to ${who(stuck)} did not open (no network path between the peers: a TURN server may be needed)`,
    ].filter(Boolean);
    return `WebRTC mesh of party ${party} not up within ${connectTimeoutMs} ms: ${why.join('; ') || 'the signaling server did not answer'}`;
  };
  const timer = setTimeout(() => fail(transportError('TIMEOUT', meshTimeoutMessage())), connectTimeoutMs);

  const onAbort = () => {
    fail(transportError('ABORTED', 'connect aborted', undefined, options.signal?.reason));
    stopJoining.abort();
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();

  const joining = SignalingClient.join({
    url: options.signalingUrl,
    room,
    party,
    parties,
    WebSocket: WebSocketImpl,
    timeoutMs: connectTimeoutMs,
    signal: stopJoining.signal,
    handlers: {
      onPeerJoined: (peer) => {
        seen.add(peer);
        report(peer, 'present');
        if (!settled && peer > party) offerTo(peer);
      },
      onPeerLeft: (peer) => {
        // A peer leaves signaling as soon as its own mesh is up, which may be a moment before
        // our end of its channel opens; only a peer that left before the descriptions were
        // exchanged is surely lost (the rest is up to ICE and the connect deadline).
        const state = peers.get(peer);
        if (!state?.open && !state?.haveRemote) {
          fail(transportError('PEER_DISCONNECTED', `party ${peer} left before connecting`, peer));
        }
      },
      onSignal,
      onFailure: fail,
    },
  });
  try {
    signaling = await Promise.race([joining, ready.then(() => undefined)]);
    if (!signaling) throw transportError('SIGNALING_FAILED', 'mesh settled before joining');
    if (options.iceServers === undefined) iceServers = signaling.iceServers;
    for (const peer of signaling.present) seen.add(peer);
    for (const peer of signaling.present) report(peer, 'present');
    for (const peer of signaling.present) if (peer > party) offerTo(peer);
    await ready;
    return transport;
  } catch (error) {
    settled = true;
    const err =
      error instanceof Error && 'code' in error
        ? (error as TransportError)
        : transportError('SIGNALING_FAILED', 'connect failed', undefined, error);
    stopJoining.abort();
    await transport.close(err);
    throw err;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    // The signaling server is needed only to introduce peers. If joining is still under way
    // (we gave up first), the socket is closed whenever it opens.
    void joining.then(
      (client) => client.close(),
      () => {},
    );
  }
}

/**
 * Adds a remote candidate, ignoring a refusal: one unusable candidate (another address family,
 * or libdatachannel refusing one while its ICE agent is still being set up) is not a failed
 * connection; ICE uses the others, and the connect deadline bounds the wait if none works.
 */
async function addCandidate(pc: RTCPeerConnection, candidate: RTCIceCandidateInit): Promise<void> {
  try {
    await pc.addIceCandidate(candidate);
  } catch {
    // See above.
  }
}

/** Lets queued data go (bounded), closes the channel, and waits (bounded) for it to close. */
function closeChannel(channel: RTCDataChannel, graceful: boolean, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (channel.readyState === 'closed') return resolve();
    const deadline = Date.now() + (graceful ? timeoutMs : 0);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearInterval(poll);
      clearTimeout(hardStop);
      channel.removeEventListener('close', finish);
      resolve();
    };
    channel.addEventListener('close', finish);
    let closed = false;
    const tryClose = () => {
      if (closed) return;
      if (channel.bufferedAmount === 0 || Date.now() >= deadline) {
        closed = true;
        try {
          channel.close();
        } catch {
          finish();
        }
      }
    };
    const poll = setInterval(tryClose, 5);
    // The close needs the peer's answer (an SCTP stream reset); a dead peer must not hold us.
    const hardStop = setTimeout(finish, (graceful ? timeoutMs : 0) + 1_000);
    tryClose();
  });
}
