// Bare WebRTC data channels, no webmpc framing: the ceiling our transport is compared with.
// Browser-safe (the Chromium rows run it in the page; Node passes node-datachannel's polyfill).
// One side floods bytes in fixed-size messages striped over its channels, keeping at most
// `highWater` bytes queued per channel; the other counts them and answers one byte when all
// arrived, which stops the clock. The bench drives the offer/answer and trickles candidates.

/**
 * A peer connection with `channels` pre-negotiated data channels (ids 0..channels-1).
 * `rtc`: extra RTCPeerConnection configuration (e.g. node-datachannel's `mtu`).
 */
export function createRawPeer(PeerConnection, { channels = 1, ordered = true, rtc = {} } = {}) {
  const pc = new PeerConnection({ iceServers: [], ...rtc });
  const peer = { pc, channels: [], candidates: [], received: 0, expect: undefined, ackWaiters: [], count: channels, ordered };
  pc.onicecandidate = (event) => {
    const c = event.candidate;
    if (c && c.candidate) peer.candidates.push({ candidate: c.candidate, sdpMid: c.sdpMid, sdpMLineIndex: c.sdpMLineIndex });
  };
  return peer;
}

function openChannels(peer) {
  for (let id = 0; id < peer.count; id++) {
    const channel = peer.pc.createDataChannel(`raw${id}`, { negotiated: true, id, ordered: peer.ordered });
    channel.binaryType = 'arraybuffer';
    channel.onmessage = (event) => {
      const bytes = event.data.byteLength;
      if (peer.expect === undefined) {
        // The flooding side: a one-byte message is the sink's acknowledgement.
        for (const wake of peer.ackWaiters.splice(0)) wake();
        return;
      }
      peer.received += bytes;
      if (peer.received >= peer.expect) {
        peer.received -= peer.expect;
        peer.channels[0].send(new Uint8Array(1));
      }
    };
    peer.channels.push(channel);
  }
}

export async function rawOffer(peer) {
  openChannels(peer);
  const offer = await peer.pc.createOffer();
  await peer.pc.setLocalDescription(offer);
  return offer.sdp;
}

export async function rawAnswer(peer, sdp) {
  await peer.pc.setRemoteDescription({ type: 'offer', sdp });
  openChannels(peer);
  const answer = await peer.pc.createAnswer();
  await peer.pc.setLocalDescription(answer);
  return answer.sdp;
}

export async function rawAccept(peer, sdp) {
  await peer.pc.setRemoteDescription({ type: 'answer', sdp });
}

/** Candidates gathered since the last call. */
export function rawCandidates(peer) {
  return peer.candidates.splice(0);
}

export async function rawAddCandidates(peer, candidates) {
  for (const candidate of candidates) {
    try {
      await peer.pc.addIceCandidate(candidate);
    } catch {
      // One unusable candidate is not a failed connection.
    }
  }
}

export function rawOpen(peer) {
  return peer.channels.length > 0 && peer.channels.every((c) => c.readyState === 'open');
}

/** Makes this peer the sink: it acknowledges every `bytes` received. */
export function rawSink(peer, bytes) {
  peer.expect = bytes;
  peer.received = 0;
}

function drained(channel) {
  return new Promise((resolve) => {
    const wake = () => {
      channel.removeEventListener('bufferedamountlow', wake);
      resolve();
    };
    channel.addEventListener('bufferedamountlow', wake);
  });
}

/** Floods `total` bytes to the sink; resolves with MB/s once the sink acknowledged them all. */
export async function rawFlood(peer, { total, messageBytes = 65_536, highWater = 1 << 20, low = highWater / 4 }) {
  for (const channel of peer.channels) channel.bufferedAmountLowThreshold = low;
  const message = new Uint8Array(messageBytes);
  const acknowledged = new Promise((resolve) => peer.ackWaiters.push(resolve));
  const t0 = performance.now();
  let sent = 0;
  for (let k = 0; sent < total; k++) {
    const channel = peer.channels[k % peer.channels.length];
    if (channel.bufferedAmount > highWater) await drained(channel);
    const n = Math.min(messageBytes, total - sent);
    channel.send(n === messageBytes ? message : message.subarray(0, n));
    sent += n;
  }
  await acknowledged;
  return total / 1e6 / ((performance.now() - t0) / 1000);
}

/** UDP packets and bytes this peer connection sent and received so far (W3C transport stats). */
export async function rawPackets(peer) {
  let out;
  (await peer.pc.getStats()).forEach((s) => {
    if (s.type === 'transport' && s.packetsSent !== undefined) {
      out = { packetsSent: s.packetsSent, packetsReceived: s.packetsReceived, bytesSent: s.bytesSent };
    }
  });
  return out;
}

export function rawClose(peer) {
  peer.pc.close();
}

/**
 * Connects two raw peers through adapters `{ call(name, arg) }` that run this module's functions
 * by name (`rawOffer`, ...) on their side, in the page or in Node. `a` offers and floods, `b`
 * answers and sinks.
 */
export async function connectRaw(a, b, timeoutMs = 30_000) {
  const answer = await b.call('rawAnswer', await a.call('rawOffer'));
  await a.call('rawAccept', answer);
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    await b.call('rawAddCandidates', await a.call('rawCandidates'));
    await a.call('rawAddCandidates', await b.call('rawCandidates'));
    if ((await a.call('rawOpen')) && (await b.call('rawOpen'))) return;
    if (performance.now() > deadline) throw new Error('raw data channels did not open');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
