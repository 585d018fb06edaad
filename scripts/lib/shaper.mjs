// A userspace network shaper for the benchmarks and tests (`tc netem` is not available on these
// machines). One link model, two forms:
//
//   shapeTransport(s)  wraps any in-process `Transport` (ts/net/transport.ts), so parties in one
//                      process (e.g. over createMemoryTransports) talk over shaped links, per
//                      ordered pair;
//   startForwarder     a TCP forwarder (listens on a local port, forwards to a target), shaping
//                      each direction, so parties in separate processes (WebSocket relay, direct
//                      WebSockets: `webmpc party --transport websocket`) are shaped by pointing
//                      their URL at it. Direct WebSockets: one forwarder per dialled pair, in
//                      front of the listening party (per-pair delays, `world` included). The
//                      relay: one forwarder per party in front of the relay, each with half the
//                      pair's one-way delay (every message crosses two access links), so only
//                      uniform profiles fit there.
//
// The link model (ShapedLink), one per direction: bytes are serialised at the link rate in FIFO
// order, so a message sent at t arrives at max(t, link free) + bytes / rate + delay (+ jitter,
// clamped so a message never overtakes the one before it: every form here carries an in-order
// stream). A link holds one timer, for the head of its queue, not one per message.
//
// Loss is NOT applied: every form here is a reliable, in-order stream (the Transport contract;
// TCP under the forwarder), where a lost packet becomes a retransmission, i.e. delay, not a
// missing message. The `mobile` profile carries its 0.5 % loss figure for a datagram form to use
// (WebRTC unreliable channels, not built); no retransmission delay is modelled for it.
// Not covered: WebRTC between Node parties and browser pages (their ICE would need a TURN-like
// relay pointing at a forwarder); aborts under the transport wrapper reach the peers at once
// (the in-memory transport tells them directly), not after the one-way delay.
import { createServer, connect } from 'node:net';

/**
 * One direction of a link.
 * @typedef {object} LinkSpec
 * @property {number} delayMs one-way propagation delay, ms
 * @property {number} bitsPerSecond link rate (Infinity: no serialisation delay)
 * @property {number} [jitterMs] extra delay drawn uniformly from [0, jitterMs) per message, clamped so
 *   messages never reorder (default 0)
 * @property {number} [seed] seed of the jitter's generator (not secret; fixed so runs repeat)
 * @property {number} [bufferBytes] the sender's buffer: a send is accepted while at most this many
 *   bytes wait to be serialised ahead of it (default 4 MiB, a kernel socket buffer's order)
 */

/**
 * @typedef {object} Profile
 * @property {string} name
 * @property {string} description
 * @property {(from: number, to: number) => LinkSpec} link the link from party `from` to party `to`
 * @property {number} loss the loss rate the profile stands for; not applied (see the header)
 * @property {number} [maxParties] parties the profile has links for (world: one per region)
 */

const MIB = 1024 * 1024;
const DEFAULT_BUFFER = 4 * MIB;
/** Timer grain: a message due within this many ms is delivered now (see ShapedLink.#arm). */
const GRAIN_MS = 0.5;

/** @param {LinkSpec} spec */
function checkSpec(spec) {
  const ok = (/** @type {unknown} */ x, /** @type {boolean} */ infinite = false) =>
    typeof x === 'number' && x >= 0 && (infinite || Number.isFinite(x));
  if (!ok(spec.delayMs) || !ok(spec.bitsPerSecond, true) || spec.bitsPerSecond === 0) {
    throw new RangeError('shaper: a link needs delayMs ≥ 0 and bitsPerSecond > 0');
  }
  if (spec.jitterMs !== undefined && !ok(spec.jitterMs)) throw new RangeError('shaper: jitterMs must be ≥ 0');
  if (spec.bufferBytes !== undefined && !(ok(spec.bufferBytes) && spec.bufferBytes > 0)) {
    throw new RangeError('shaper: bufferBytes must be > 0');
  }
}

/** A small seeded generator (mulberry32) for jitter: reproducible, nothing secret depends on it. */
function generator(seed = 1) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * One direction of a shaped link. `push` takes a message (after `admit`), `deliver` is called with
 * each message at its arrival time, in order, one at a time (the next waits for the previous
 * delivery's promise, which is how the receiver's own backpressure reaches the sender).
 */
export class ShapedLink {
  /** @type {{ data: Uint8Array, at: number }[]} */
  #queue = [];
  /** When the link has serialised everything pushed so far (performance.now() ms). */
  #freeAt = 0;
  #lastArrival = 0;
  /** Bytes pushed whose delivery has not completed. */
  #pending = 0;
  /** @type {ReturnType<typeof setTimeout> | ReturnType<typeof setImmediate> | undefined} */
  #timer;
  #immediate = false;
  #delivering = Promise.resolve();
  /** @type {Error | undefined} */
  #error;
  /** Woken whenever pending bytes drop or the link fails. */
  /** @type {Set<() => void>} */
  #wakers = new Set();
  #random;
  #msPerByte;
  #buffer;
  /** Bytes that may be accepted but undelivered: the buffer plus what the wire holds in flight. */
  #pendingCap;

  /**
   * @param {LinkSpec} spec
   * @param {(data: Uint8Array) => void | Promise<void>} deliver
   */
  constructor(spec, deliver) {
    checkSpec(spec);
    this.spec = spec;
    this.deliver = deliver;
    this.#random = generator(spec.seed);
    this.#msPerByte = Number.isFinite(spec.bitsPerSecond) ? 8000 / spec.bitsPerSecond : 0;
    this.#buffer = spec.bufferBytes ?? DEFAULT_BUFFER;
    const inFlight = Number.isFinite(spec.bitsPerSecond) ? (spec.bitsPerSecond / 8000) * spec.delayMs : this.#buffer;
    this.#pendingCap = this.#buffer + inFlight;
  }

  /** Bytes waiting to be serialised right now. */
  backlogBytes(now = performance.now()) {
    return this.#msPerByte === 0 ? 0 : Math.max(0, this.#freeAt - now) / this.#msPerByte;
  }

  /** Whether a message may be pushed now without exceeding the sender's buffer. */
  admissible(now = performance.now()) {
    if (this.#pending === 0) return true; // one message always goes, however large
    return this.backlogBytes(now) <= this.#buffer && this.#pending <= this.#pendingCap;
  }

  /**
   * Resolves when `admissible()`; rejects once the link has failed. No deadline of its own: the
   * serialisation wait is bounded by backlog / rate, and a receiver that stops taking messages is
   * bounded by the delivering transport's own send timeout, which fails the link.
   * @returns {Promise<void>}
   */
  admit() {
    if (this.#error) return Promise.reject(this.#error);
    if (this.admissible()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      /** @type {ReturnType<typeof setTimeout> | undefined} */
      let timer;
      const check = () => {
        if (timer !== undefined) clearTimeout(timer);
        timer = undefined;
        if (this.#error) {
          this.#wakers.delete(check);
          reject(this.#error);
        } else if (this.admissible()) {
          this.#wakers.delete(check);
          resolve();
        } else if (this.backlogBytes() > this.#buffer) {
          // The serialisation backlog drains at a known time; wake then.
          const wait = this.#freeAt - this.#buffer * this.#msPerByte - performance.now();
          timer = setTimeout(check, Math.max(1, wait));
        }
      };
      this.#wakers.add(check);
      check();
    });
  }

  /**
   * Queues `data` (not copied: the caller hands it over) and returns its arrival time.
   * @param {Uint8Array} data
   */
  push(data) {
    if (this.#error) throw this.#error;
    const now = performance.now();
    const start = Math.max(now, this.#freeAt);
    this.#freeAt = start + data.byteLength * this.#msPerByte;
    const jitter = this.spec.jitterMs ? this.#random() * this.spec.jitterMs : 0;
    const at = Math.max(this.#freeAt + this.spec.delayMs + jitter, this.#lastArrival);
    this.#lastArrival = at;
    this.#pending += data.byteLength;
    this.#queue.push({ data, at });
    if (this.#queue.length === 1) this.#arm();
    return at;
  }

  /** Resolves when everything pushed has been delivered (or the link failed). */
  drained() {
    return new Promise((resolve) => {
      const check = () => {
        if (this.#error || (this.#pending === 0 && this.#queue.length === 0)) {
          this.#wakers.delete(check);
          resolve(undefined);
        }
      };
      this.#wakers.add(check);
      check();
    });
  }

  /**
   * Drops everything queued and fails the link: later `admit`/`push` reject with `error`.
   * @param {Error} error
   */
  abort(error) {
    this.#error ??= error;
    this.#queue.length = 0;
    this.#disarm();
    this.#wake();
  }

  get failed() {
    return this.#error;
  }

  #wake() {
    for (const w of [...this.#wakers]) w();
  }

  #disarm() {
    if (this.#timer === undefined) return;
    if (this.#immediate) clearImmediate(/** @type {ReturnType<typeof setImmediate>} */ (this.#timer));
    else clearTimeout(/** @type {ReturnType<typeof setTimeout>} */ (this.#timer));
    this.#timer = undefined;
  }

  /** One timer for the head of the queue. */
  #arm() {
    const head = this.#queue[0];
    if (head === undefined || this.#timer !== undefined) return;
    const wait = head.at - performance.now();
    // Node's timers count whole milliseconds, so a message may arrive up to GRAIN_MS early (and,
    // like any timer, late when the machine is busy). No busy polling to do better: on a loaded
    // machine a spinning process is descheduled for milliseconds, which is worse.
    this.#immediate = wait <= GRAIN_MS;
    this.#timer = this.#immediate ? setImmediate(() => this.#fire()) : setTimeout(() => this.#fire(), wait);
  }

  #fire() {
    this.#timer = undefined;
    const now = performance.now();
    while (this.#queue.length > 0 && /** @type {{ at: number }} */ (this.#queue[0]).at <= now + GRAIN_MS) {
      const { data } = /** @type {{ data: Uint8Array }} */ (this.#queue.shift());
      this.#handOver(data);
    }
    this.#arm();
  }

  /** @param {Uint8Array} data */
  #handOver(data) {
    this.#delivering = this.#delivering.then(async () => {
      if (this.#error) return;
      try {
        await this.deliver(data);
      } catch (error) {
        this.abort(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      this.#pending -= data.byteLength;
      this.#wake();
    });
  }
}

// ------------------------------------------------------------------------------------------------
// Profiles.

/**
 * @param {string} name
 * @param {string} description
 * @param {number} delayMs
 * @param {number} bitsPerSecond
 * @param {number} [loss]
 * @returns {Profile}
 */
function uniform(name, description, delayMs, bitsPerSecond, loss = 0) {
  return { name, description, loss, link: () => ({ delayMs, bitsPerSecond }) };
}

/**
 * The seed paper's WAN regions: Wang, Ranellucci, Katz, "Global-Scale Secure Multiparty
 * Computation", CCS 2017, Table 7 ("List of all Amazon EC2 regions used in the WAN experiment"),
 * in the order printed (row by row), which is the order §6.1 takes prefixes of: "a k-party
 * computation experiment [uses] a prefix subset of the machines in Table 7" (3PC: North Virginia,
 * Ohio, North California, as §6.2 says). Party p sits in region p.
 *
 * Table 7 gives no delays, and the paper gives a single figure: §1, "the communication latency
 * between parties located in the U.S. and Europe is around 75 ms" (read here as a round trip,
 * North Virginia–Ireland). The one-way delays below are therefore an ESTIMATE, not measurements:
 * great-circle distance between the region's city (coordinates: the city the paper names, our
 * figures to 0.01°) at the speed of light in fibre (200 km/ms), times a route factor fitted so
 * that North Virginia–Ireland gives the paper's 75 ms round trip (37.5 ms one way). Real routes
 * are not great circles: the estimate is likely low for pairs whose paths detour (within North
 * America, Europe–Asia); `WORLD_OVERRIDES` is where measured figures would go, with a source.
 */
export const WORLD_REGIONS = /** @type {const} */ ([
  { name: 'North Virginia', continent: 'North America', lat: 39.04, lon: -77.49 },
  { name: 'Ohio', continent: 'North America', lat: 39.96, lon: -83.0 },
  { name: 'North California', continent: 'North America', lat: 37.34, lon: -121.89 },
  { name: 'Oregon', continent: 'North America', lat: 45.84, lon: -119.7 },
  { name: 'Toronto', continent: 'North America', lat: 43.65, lon: -79.38 },
  { name: 'Ireland', continent: 'Europe', lat: 53.35, lon: -6.26 },
  { name: 'London', continent: 'Europe', lat: 51.51, lon: -0.13 },
  { name: 'Frankfurt', continent: 'Europe', lat: 50.11, lon: 8.68 },
  { name: 'Mumbai', continent: 'Asia', lat: 19.08, lon: 72.88 },
  { name: 'Tokyo', continent: 'Asia', lat: 35.68, lon: 139.69 },
  { name: 'Seoul', continent: 'Asia', lat: 37.57, lon: 126.98 },
  { name: 'Singapore', continent: 'Asia', lat: 1.35, lon: 103.82 },
  { name: 'Sydney', continent: 'Australia', lat: -33.87, lon: 151.21 },
  { name: 'São Paulo', continent: 'South America', lat: -23.55, lon: -46.63 },
]);

/** Measured one-way delays (ms) by `${i}-${j}` region pair (i < j), each with its source. None yet. */
export const WORLD_OVERRIDES = /** @type {Record<string, { delayMs: number, source: string }>} */ ({});

const FIBRE_KM_PER_MS = 200;
const PAPER_US_EU_RTT_MS = 75; // §1 of the paper
/** Bandwidth between regions: the paper says only "depends on the location"; 100 Mbit/s here. */
const WORLD_BITS_PER_SECOND = 100e6;

/** @param {{ lat: number, lon: number }} a @param {{ lat: number, lon: number }} b */
function greatCircleKm(a, b) {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLon = (b.lon - a.lon) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * 6371 * Math.asin(Math.sqrt(h));
}

const region = (/** @type {number} */ i) => /** @type {(typeof WORLD_REGIONS)[number]} */ (WORLD_REGIONS[i]);
/** Route factor: North Virginia (0) – Ireland (5) at the paper's 75 ms round trip. */
export const WORLD_ROUTE_FACTOR = PAPER_US_EU_RTT_MS / 2 / (greatCircleKm(region(0), region(5)) / FIBRE_KM_PER_MS);

/**
 * One-way delay (ms) between the regions of parties `i` and `j` under `world`.
 * @param {number} i
 * @param {number} j
 */
export function worldDelayMs(i, j) {
  if (!(Number.isInteger(i) && Number.isInteger(j) && i >= 0 && j >= 0 && i < WORLD_REGIONS.length && j < WORLD_REGIONS.length)) {
    throw new RangeError(`shaper: the world profile has ${WORLD_REGIONS.length} regions (Table 7), one party each`);
  }
  if (i === j) return 0;
  const measured = WORLD_OVERRIDES[`${Math.min(i, j)}-${Math.max(i, j)}`];
  if (measured) return measured.delayMs;
  return (greatCircleKm(region(i), region(j)) / FIBRE_KM_PER_MS) * WORLD_ROUTE_FACTOR;
}

/** @type {Record<'lan' | 'continent' | 'mobile' | 'world', Profile>} */
export const PROFILES = {
  lan: uniform('lan', '0.1 ms one way, 1 Gbit/s', 0.1, 1e9),
  continent: uniform('continent', '35 ms one way, 100 Mbit/s', 35, 100e6),
  mobile: uniform('mobile', '60 ms one way, 20 Mbit/s (0.5 % loss: not applied to reliable streams)', 60, 20e6, 0.005),
  world: {
    name: 'world',
    description: "party p in Table 7's region p (WRK17); one-way delays estimated from distance, 100 Mbit/s",
    loss: 0,
    maxParties: WORLD_REGIONS.length,
    link: (from, to) => ({ delayMs: worldDelayMs(from, to), bitsPerSecond: WORLD_BITS_PER_SECOND }),
  },
};

/**
 * A profile by name, or a uniform one from `delayMs` / `bitsPerSecond` (e.g. the benches' 0 and
 * 35 ms forwarders).
 * @param {string | Profile | UniformLink} p
 * @returns {Profile}
 */
export function profile(p) {
  if (typeof p === 'string') {
    const found = /** @type {Record<string, Profile>} */ (PROFILES)[p];
    if (!found) throw new RangeError(`shaper: unknown profile '${p}' (have ${Object.keys(PROFILES).join(', ')})`);
    return found;
  }
  if ('link' in p) return p;
  const spec = { delayMs: p.delayMs, bitsPerSecond: p.bitsPerSecond ?? Infinity, ...(p.jitterMs ? { jitterMs: p.jitterMs } : {}) };
  checkSpec(spec);
  return { name: p.name ?? `${p.delayMs}ms`, description: `${p.delayMs} ms one way`, loss: 0, link: () => spec };
}

// ------------------------------------------------------------------------------------------------
// Form (a): a wrapper around any in-process Transport.

/** @typedef {import('../../dist/net/transport.js').Transport} Transport */
/** @typedef {{ delayMs: number, bitsPerSecond?: number, jitterMs?: number, name?: string }} UniformLink */

/**
 * Shapes what `inner` sends: a message to party `to` travels over `profile.link(party, to)`
 * before `inner.send` takes it. Receiving, `closed`, errors and argument checks are `inner`'s.
 * A graceful `close()` first lets the queued messages arrive (bounded by `drainTimeoutMs`); an
 * abort (`close(reason)`) drops them.
 * @param {Transport} inner
 * @param {string | Profile | UniformLink} p
 * @param {{ drainTimeoutMs?: number }} [options]
 * @returns {Transport}
 */
export function shapeTransport(inner, p, options = {}) {
  const prof = profile(p);
  if (prof.maxParties !== undefined && inner.parties > prof.maxParties) {
    throw new RangeError(`shaper: profile '${prof.name}' has links for at most ${prof.maxParties} parties`);
  }
  const drainTimeoutMs = options.drainTimeoutMs ?? 60_000;
  /** @type {Map<number, ShapedLink>} */
  const links = new Map();
  /** Per destination, the send before this one (a send waiting for room keeps its place). */
  /** @type {Map<number, Promise<void>>} */
  const tails = new Map();
  /** Set by close(): later sends wait for it, then get the inner transport's CLOSED rejection. */
  /** @type {Promise<void> | undefined} */
  let closing;
  const linkTo = (/** @type {number} */ to) => {
    let link = links.get(to);
    if (!link) {
      link = new ShapedLink(prof.link(inner.party, to), (data) => inner.send(to, data, true));
      links.set(to, link);
    }
    return link;
  };
  const abortAll = (/** @type {Error} */ error) => {
    for (const link of links.values()) link.abort(error);
  };
  // When the inner transport closes for any reason, nothing more can be delivered: stop timers.
  void inner.closed.then((reason) => abortAll(reason ?? new Error('shaper: the transport closed')));
  /** @type {Transport} */
  const shaped = {
    get party() {
      return inner.party;
    },
    get parties() {
      return inner.parties;
    },
    get closed() {
      return inner.closed;
    },
    send(to, data, owned) {
      const valid = Number.isInteger(to) && to >= 0 && to < inner.parties && to !== inner.party;
      // Argument errors and sends after close: the inner transport's own typed rejection.
      if (!valid) return inner.send(to, data, owned);
      if (closing) return closing.then(() => inner.send(to, data, owned));
      const link = linkTo(to);
      const copy = owned ? data : data.slice();
      const sent = (tails.get(to) ?? Promise.resolve()).then(async () => {
        await link.admit();
        link.push(copy);
      });
      tails.set(
        to,
        sent.catch(() => {}),
      );
      return sent;
    },
    recv(from, recvOptions) {
      return inner.recv(from, recvOptions);
    },
    close(reason) {
      if (reason !== undefined) {
        // An abort goes out at once, even while a graceful close is still draining.
        abortAll(reason);
        const aborted = inner.close(reason);
        closing ??= aborted;
        return aborted;
      }
      closing ??= (async () => {
        /** @type {ReturnType<typeof setTimeout> | undefined} */
        let timer;
        const timeout = new Promise((resolve) => (timer = setTimeout(resolve, drainTimeoutMs)));
        const drained = Promise.all([...tails.values()]).then(() => Promise.all([...links.values()].map((l) => l.drained())));
        await Promise.race([drained, timeout]);
        clearTimeout(timer);
        abortAll(new Error('shaper: the transport closed'));
        await inner.close();
      })();
      return closing;
    },
  };
  if (inner.limitMessageBytes) {
    const limit = inner.limitMessageBytes.bind(inner);
    shaped.limitMessageBytes = (maxBytes, opening) => limit(maxBytes, opening);
  }
  return shaped;
}

/**
 * Wraps each transport of one session (element i is party i's), every ordered pair over its own
 * link of `p`.
 * @param {Transport[]} transports
 * @param {string | Profile | UniformLink} p
 * @param {{ drainTimeoutMs?: number }} [options]
 */
export function shapeTransports(transports, p, options) {
  return transports.map((t) => shapeTransport(t, p, options));
}

// ------------------------------------------------------------------------------------------------
// Form (b): a TCP forwarder.

/**
 * @typedef {object} Forwarder
 * @property {string} host
 * @property {number} port the port it listens on
 * @property {number} connections connections accepted so far
 * @property {{ forward: number, backward: number }} bytes bytes taken in so far, client→target and
 *   target→client, over every connection (the wire bytes: WebSocket framing and all)
 * @property {() => Promise<void>} close stops listening and cuts every connection
 */

/**
 * Listens on `host:port` (default 127.0.0.1, a free port) and forwards each connection to
 * `target`, client→target over `forward` and target→client over `backward`. Backpressure: a
 * socket is paused while its link's buffer is full. A half-close (FIN) is passed on once the
 * bytes before it have arrived; an error on either side destroys the other at once.
 * @param {{ target: { host?: string, port: number }, forward: LinkSpec, backward?: LinkSpec, host?: string, port?: number }} options
 * @returns {Promise<Forwarder>}
 */
export async function startForwarder(options) {
  const forward = options.forward;
  const backward = options.backward ?? forward;
  checkSpec(forward);
  checkSpec(backward);
  const host = options.host ?? '127.0.0.1';
  /** @type {Set<import('node:net').Socket>} */
  const sockets = new Set();
  /** @type {Set<ShapedLink>} */
  const links = new Set();
  let connections = 0;
  const bytes = { forward: 0, backward: 0 };

  /**
   * Shapes `from`'s bytes into `to`.
   * @param {import('node:net').Socket} from
   * @param {import('node:net').Socket} to
   * @param {LinkSpec} spec
   * @param {'forward' | 'backward'} direction
   */
  const pipe = (from, to, spec, direction) => {
    const link = new ShapedLink(spec, (chunk) => {
      if (to.destroyed) throw new Error('shaper: the far side is gone');
      if (!to.write(chunk)) {
        return new Promise((resolve, reject) => {
          const done = (/** @type {Error | undefined} */ err) => {
            to.off('drain', done);
            to.off('close', done);
            if (err || to.destroyed) reject(err ?? new Error('shaper: the far side closed'));
            else resolve();
          };
          to.on('drain', done);
          to.on('close', done);
        });
      }
    });
    links.add(link);
    from.on('data', (chunk) => {
      if (link.failed) {
        // The far side is gone: nothing this side sends can arrive, so cut it too.
        from.destroy();
        return;
      }
      bytes[direction] += chunk.byteLength;
      link.push(chunk);
      if (!link.admissible()) {
        from.pause();
        link.admit().then(
          () => from.resume(),
          () => {},
        );
      }
    });
    from.on('end', () => {
      void link.drained().then(() => {
        if (!link.failed && !to.destroyed) to.end();
      });
    });
    return link;
  };

  const server = createServer({ allowHalfOpen: true, noDelay: true }, (client) => {
    connections++;
    const upstream = connect({ host: options.target.host ?? '127.0.0.1', port: options.target.port, allowHalfOpen: true, noDelay: true });
    sockets.add(client);
    sockets.add(upstream);
    const up = pipe(client, upstream, forward, 'forward');
    const down = pipe(upstream, client, backward, 'backward');
    /** @param {import('node:net').Socket} a @param {import('node:net').Socket} b */
    const onClose = (a, b) => (/** @type {boolean} */ hadError) => {
      sockets.delete(a);
      if (hadError) {
        b.destroy();
      } else if (!b.destroyed && a.readableEnded === false) {
        // Closed without a FIN having been read (destroyed locally): pass it on once drained.
        void (a === client ? up : down).drained().then(() => b.end());
      }
      if (client.destroyed && upstream.destroyed) {
        up.abort(new Error('shaper: connection closed'));
        down.abort(new Error('shaper: connection closed'));
        links.delete(up);
        links.delete(down);
      }
    };
    client.on('close', onClose(client, upstream));
    upstream.on('close', onClose(upstream, client));
    // Errors are reported through 'close' (hadError); a listener keeps them from being thrown.
    client.on('error', () => {});
    upstream.on('error', () => {});
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve(undefined);
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('shaper: the forwarder has no TCP address');
  return {
    host,
    port: address.port,
    get connections() {
      return connections;
    },
    bytes,
    close: async () => {
      const stopped = new Promise((resolve) => server.close(() => resolve(undefined)));
      for (const s of sockets) s.destroy();
      for (const l of links) l.abort(new Error('shaper: forwarder closed'));
      await stopped;
    },
  };
}
