/**
 * The enclave-server (Node only): hosts the teleport enclave program beside the evaluator and
 * serves it over WebSocket. `webmpc enclave-server` runs it from the command line;
 * {@link startEnclaveServer} from code.
 *
 * One WebSocket connection is one **attested session**: the server starts one enclave program
 * for it (the simulation process, or the Open Enclave host with its enclave), whose evidence
 * (made for the session's challenge: both parties' fresh nonces) and X25519 key serve every job
 * the client runs on that connection, so evidence verification and key agreement are paid once
 * per session. The server does no cryptography and holds no secret: each binary WebSocket
 * message is one link frame (peer byte ‖ enclave message), written to the program's stdin as
 * `u32 length ‖ frame`; each frame the program writes on stdout goes back as one WebSocket
 * message. The evaluator (the client) relays the garbler's sealed seeds and seals its own input;
 * the program checks everything that matters (`wasm/crates/teleport`, `enclave-server/README.md`).
 *
 * Who may use it, and how much (nothing here authenticates a client by itself; put the server
 * behind your own authentication, or use `authorize`):
 * - **Origins.** A browser page anywhere could open a WebSocket to `ws://127.0.0.1:8790`
 *   (WebSockets are not subject to CORS), so a request carrying an `Origin` header (every
 *   browser sends one) is refused with 403 unless the origin is in `allowedOrigins` (default:
 *   none; `['*']` allows any). Clients without an Origin (Node, native) pass this check.
 * - **Per client.** At most `maxSessionsPerClient` sessions (default 4) per client identity
 *   (`clientId`, default the remote address: behind a reverse proxy, derive it from the proxy's
 *   header), within `maxSessions` (16) in all, so one client cannot hold every slot. A
 *   connection that sends nothing within `handshakeTimeoutMs` (30 s) is closed.
 * - **Per session**, enforced by the program before it allocates: wires, gates and ROTs per job,
 *   jobs per session, and the memory a job declares (`maxMemory`, default 256 MiB): the
 *   programs use at most about `maxSessions × maxMemory` together.
 * - **What remains.** Teleportation *is* amplification: the enclave turns a 16-byte sealed seed
 *   into circuit-sized tables. A client may play both parties (seal a seed itself) and make the
 *   enclave garble; nothing can tell it from an honest evaluator relaying a garbler. That work is
 *   bounded per job and per session by the limits above, paced by the client's own reading
 *   (backpressure: the program stops when the client does not read), and shared across clients
 *   only by the session caps — there is no per-client rate limit of CPU or bandwidth.
 *
 * Disconnect rules — nothing hangs, and everyone concerned gets a typed abort:
 * - The client leaves: the program's stdin is closed (between jobs it exits quietly; mid-job it
 *   reports `PEER_DISCONNECTED`), and it is killed if it has not exited 5 s later.
 * - The program exits or dies while the client is connected: the client gets an `Error` frame
 *   (`ENCLAVE_PROGRAM_EXITED`, with the exit code or signal) and the connection closes (1011),
 *   so the evaluator's run rejects with `ENCLAVE_FAILED` at once and, through the session's
 *   transport, the garbler's too.
 * - A malformed frame from the client closes its session (1008). More sessions than
 *   `maxSessions` (or than `maxSessionsPerClient` for one client) are refused (1013,
 *   `ENCLAVE_BUSY`). A session idle for `idleTimeoutMs` closes.
 * - A frame from the program over the link's limit (the program never writes one: every
 *   message fits 4 MiB) is reported to the client as `TOO_LARGE`, never forwarded or waited on.
 *
 * Backends:
 * - `simulation`: `webmpc-enclave-program`, a native process with AES-NI and a **software**
 *   evidence key: no hardware protection at all — whoever runs this server can read every
 *   garbler's seed and every x2⁰ share. It says so loudly, and clients refuse it unless they set
 *   `allowSimulatedEnclave: true`.
 * - `openenclave`: `webmpc_host` and a signed enclave image built where the Open Enclave SDK and
 *   SGX exist (`enclave-server/openenclave/README.md`); refused with `ENCLAVE_UNAVAILABLE`,
 *   saying what is missing, when they are not there.
 */
import { execFile, spawn, type ChildProcessByStdio } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { WebmpcError } from '../errors.js';
import { DEFAULT_MAX_SESSIONS_PER_CLIENT, MAX_LINK_FRAME } from './link.js';

/** Which enclave program the server runs. */
export type EnclaveBackend = 'simulation' | 'openenclave';

export interface EnclaveServerOptions {
  /** `simulation` (a native process, no hardware protection) or `openenclave`. */
  backend: EnclaveBackend;
  /** TCP port (default 8790; 0 picks a free one). */
  port?: number;
  /** Interface to bind (default 127.0.0.1: the evaluator runs beside the server). */
  host?: string;
  /**
   * The program: `webmpc-enclave-program` (simulation; default: the one shipped next to the
   * package for this platform, else `$WEBMPC_ENCLAVE_PROGRAM`, else a development build in
   * `wasm/target/release`) or `webmpc_host` (openenclave; required).
   */
  program?: string;
  /** Open Enclave: the signed enclave image (`webmpc_enclave.signed`). */
  enclaveImage?: string;
  /** Simulation: a file with the evidence key's Ed25519 seed (64 hex digits), so clients can pin its signer. */
  evidenceKey?: string;
  /** Largest circuit (wires) a session may garble (the program's default otherwise). */
  maxWires?: number;
  /** Most gates of one job (its garbling work and output; the program's default otherwise). */
  maxGates?: number;
  /** Most random OTs of one job (the program's default otherwise). */
  maxRots?: number;
  /** Most jobs of one session (the program's default otherwise). */
  maxJobs?: number;
  /** Most memory (bytes) one job may declare (default 256 MiB): bounds each enclave program. */
  maxMemory?: number;
  /** Concurrent sessions (enclave programs) at most (default 16). */
  maxSessions?: number;
  /** Concurrent sessions of one client (`clientId`) at most (default 4). */
  maxSessionsPerClient?: number;
  /**
   * Browser origins (`https://app.example`, exact) allowed to connect; `'*'` allows any. Default:
   * none — a request with an `Origin` header is refused (403); clients without one pass.
   */
  allowedOrigins?: readonly string[];
  /** A client's identity for `maxSessionsPerClient` (default: the remote address). */
  clientId?: (request: IncomingMessage) => string;
  /**
   * Admission, after the Origin check: resolve false to refuse the connection (401), e.g. after
   * checking a token in the URL. Must answer within 10 s. Default: admit.
   */
  authorize?: (request: IncomingMessage) => boolean | Promise<boolean>;
  /** A connection that sends nothing for this long after opening is closed (ms, default 30 s). */
  handshakeTimeoutMs?: number;
  /** A session with no traffic for this long is closed (ms, default 15 minutes). */
  idleTimeoutMs?: number;
  /** Where log lines go (default: stderr). */
  log?: (line: string) => void;
}

/** A running enclave-server. */
export interface EnclaveServer {
  /** `ws://host:port` to give evaluators as `enclave.url`. */
  readonly url: string;
  readonly port: number;
  readonly backend: EnclaveBackend;
  /** True for the simulation backend: no hardware protection. */
  readonly simulated: boolean;
  /**
   * Simulation: the measurement its evidence claims (hex SHA-256 of the program), for clients to
   * pin in `policy.simulatedMeasurements` — check it against a binary you trust, out of band.
   * Open Enclave: undefined (pin the signer, product id and SVN, or the MRENCLAVE, of your signed
   * image: `oesign dump`).
   */
  readonly measurement: string | undefined;
  /** Simulation with `evidenceKey`: the evidence signer's public key (hex), for `policy.simulationSigners`. */
  readonly signer: string | undefined;
  /** The program the sessions run. */
  readonly program: string;
  /** The sessions open now, with their enclave program's process id. */
  sessions(): { id: number; pid: number | undefined }[];
  /** Closes every session and stops listening. */
  close(): Promise<void>;
}

/** Default port of `webmpc enclave-server`. */
export const DEFAULT_ENCLAVE_PORT = 8790;

const PROGRAM = 'webmpc-enclave-program';
const KILL_AFTER_MS = 5_000;
/** Default `maxMemory`: 256 MiB per job (the program's own default). */
const DEFAULT_MAX_MEMORY = 256 * 2 ** 20;
const AUTHORIZE_TIMEOUT_MS = 10_000;

function unavailable(message: string): WebmpcError {
  return new WebmpcError('ENCLAVE_UNAVAILABLE', message);
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Where the simulation program is, in the order the options document. */
export function findEnclaveProgram(explicit?: string): string {
  if (explicit !== undefined) {
    if (!executable(explicit)) throw unavailable(`the enclave program ${explicit} does not exist or is not executable`);
    return explicit;
  }
  const candidates = [
    fileURLToPath(new URL(`../native/${process.platform}-${process.arch}/${PROGRAM}`, import.meta.url)),
    ...(process.env.WEBMPC_ENCLAVE_PROGRAM ? [process.env.WEBMPC_ENCLAVE_PROGRAM] : []),
    fileURLToPath(new URL(`../../wasm/target/release/${PROGRAM}`, import.meta.url)),
  ];
  const found = candidates.find(executable);
  if (!found) {
    throw unavailable(
      `no ${PROGRAM} for ${process.platform}-${process.arch} next to the package; build it ` +
        '(`cd wasm && cargo build --release -p webmpc-enclave-program`, or `node scripts/build.mjs`) ' +
        'and pass its path (--program / `program`) or set WEBMPC_ENCLAVE_PROGRAM',
    );
  }
  return found;
}

function run(program: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(program, args, { timeout: 30_000 }, (err, stdout) => {
      if (err) reject(unavailable(`${program} ${args.join(' ')} failed: ${err.message.split('\n')[0]}`));
      else resolve(stdout.trim());
    });
  });
}

/** The parts of the Open Enclave backend that must exist on this host. */
function checkOpenEnclave(options: EnclaveServerOptions): { program: string; image: string } {
  const needs =
    'the openenclave backend needs an SGX-capable CPU with its driver (/dev/sgx_enclave), and the ' +
    'Open Enclave host `webmpc_host` and signed enclave image built from enclave-server/openenclave ' +
    'with the Open Enclave SDK (see enclave-server/openenclave/README.md); pass them as ' +
    '--program PATH --enclave-image PATH';
  if (options.program === undefined || options.enclaveImage === undefined) throw unavailable(`${needs}.`);
  if (!executable(options.program)) throw unavailable(`${options.program} does not exist or is not executable: ${needs}.`);
  if (!existsSync(options.enclaveImage)) throw unavailable(`${options.enclaveImage} does not exist: ${needs}.`);
  if (!['/dev/sgx_enclave', '/dev/sgx/enclave', '/dev/isgx'].some((d) => existsSync(d))) {
    throw unavailable(`this host exposes no SGX device: ${needs}.`);
  }
  return { program: options.program, image: options.enclaveImage };
}

/** An `Error` message (type 0xee, u32-prefixed ASCII code, u32-prefixed detail) as a link frame to `peer`. */
function errorFrame(peer: number, code: string, detail: string): Buffer {
  const c = Buffer.from(code, 'ascii');
  const d = Buffer.from(detail, 'utf8');
  const f = Buffer.alloc(2 + 4 + c.length + 4 + d.length);
  f[0] = peer;
  f[1] = 0xee;
  f.writeUInt32LE(c.length, 2);
  c.copy(f, 6);
  f.writeUInt32LE(d.length, 6 + c.length);
  d.copy(f, 10 + c.length);
  return f;
}

/** Splits the program's stdout into frames without re-copying what is buffered per chunk. */
class FrameReader {
  #chunks: Buffer[] = [];
  #length = 0;

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#length += chunk.length;
  }

  /** The next whole frame's payload (peer byte ‖ message), `null` if incomplete; throws on a bad length. */
  next(): Buffer | null {
    if (this.#length < 4) return null;
    const head = this.#take(4, false);
    const len = head.readUInt32LE(0);
    if (len < 2 || len > MAX_LINK_FRAME) throw new Error(`the enclave program wrote a frame of ${len} bytes`);
    if (this.#length < 4 + len) return null;
    this.#take(4, true);
    return this.#take(len, true);
  }

  #take(n: number, consume: boolean): Buffer {
    const first = this.#chunks[0]!;
    let out: Buffer;
    if (first.length >= n) {
      out = first.subarray(0, n);
    } else {
      out = Buffer.allocUnsafe(n);
      let at = 0;
      for (const c of this.#chunks) {
        const k = Math.min(c.length, n - at);
        c.copy(out, at, 0, k);
        at += k;
        if (at === n) break;
      }
    }
    if (consume) {
      let left = n;
      while (left > 0) {
        const c = this.#chunks[0]!;
        if (c.length <= left) {
          this.#chunks.shift();
          left -= c.length;
        } else {
          this.#chunks[0] = c.subarray(left);
          left = 0;
        }
      }
      this.#length -= n;
    }
    return out;
  }
}

/** Starts the enclave-server; resolves once it listens (after checking its backend works). */
export async function startEnclaveServer(options: EnclaveServerOptions): Promise<EnclaveServer> {
  if (typeof options !== 'object' || options === null) throw new WebmpcError('INVALID_ARGUMENT', 'startEnclaveServer needs options');
  const { backend } = options;
  if (backend !== 'simulation' && backend !== 'openenclave') {
    throw new WebmpcError('INVALID_ARGUMENT', "backend must be 'simulation' or 'openenclave'");
  }
  const log = options.log ?? ((line: string) => process.stderr.write(`webmpc enclave-server: ${line}\n`));
  const count = (name: string, v: number | undefined, fallback: number, max = Number.MAX_SAFE_INTEGER): number => {
    if (v === undefined) return fallback;
    if (!Number.isSafeInteger(v) || v <= 0 || v > max) throw new WebmpcError('INVALID_ARGUMENT', `${name} must be a positive integer up to ${max}`);
    return v;
  };
  const maxSessions = count('maxSessions', options.maxSessions, 16);
  const maxSessionsPerClient = count('maxSessionsPerClient', options.maxSessionsPerClient, DEFAULT_MAX_SESSIONS_PER_CLIENT);
  const idleTimeoutMs = count('idleTimeoutMs', options.idleTimeoutMs, 15 * 60_000);
  const handshakeTimeoutMs = count('handshakeTimeoutMs', options.handshakeTimeoutMs, 30_000);
  const maxMemory = count('maxMemory', options.maxMemory, DEFAULT_MAX_MEMORY);
  const host = options.host ?? '127.0.0.1';
  const origins = options.allowedOrigins ?? [];
  if (!Array.isArray(origins) || origins.some((o) => typeof o !== 'string')) {
    throw new WebmpcError('INVALID_ARGUMENT', "allowedOrigins must be an array of origins (or ['*'])");
  }
  const originAllowed = (origin: string) => origins.includes('*') || origins.includes(origin);
  const clientIdOf = options.clientId ?? ((req: IncomingMessage) => req.socket.remoteAddress ?? 'unknown');
  // What one session may make its program do (webmpc_teleport::machine::Config), for both backends.
  const extra: string[] = [];
  for (const [flag, name, v, max] of [
    ['--max-wires', 'maxWires', options.maxWires, 2 ** 32 - 1],
    ['--max-gates', 'maxGates', options.maxGates, Number.MAX_SAFE_INTEGER],
    ['--max-rots', 'maxRots', options.maxRots, Number.MAX_SAFE_INTEGER],
    ['--max-jobs', 'maxJobs', options.maxJobs, 2 ** 20],
  ] as const) {
    if (v !== undefined) extra.push(flag, String(count(name, v, 0, max)));
  }
  extra.push('--max-memory', String(maxMemory));

  let program: string;
  let args: string[];
  let measurement: string | undefined;
  let signer: string | undefined;
  if (backend === 'simulation') {
    program = findEnclaveProgram(options.program);
    const key = options.evidenceKey === undefined ? [] : ['--evidence-key', options.evidenceKey];
    args = [...key, ...extra];
    measurement = await run(program, ['--print-measurement']);
    if (options.evidenceKey !== undefined) signer = await run(program, ['--print-identity', ...key]);
  } else {
    const oe = checkOpenEnclave(options);
    program = oe.program;
    args = [oe.image, ...extra];
  }

  interface Session {
    id: number;
    client: string;
    ws: WebSocket;
    child: ChildProcessByStdio<Writable, Readable, Readable>;
    exited: boolean;
  }
  const sessions = new Map<number, Session>();
  /** Open sessions per client identity. */
  const perClient = new Map<string, number>();
  let nextId = 1;

  const http = createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain' }).end('webmpc enclave-server: WebSocket only\n');
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_LINK_FRAME + 16 });
  /** Refuses an upgrade with an HTTP status, before any enclave program starts. */
  const refuse = (socket: Duplex, status: number, reason: string) => {
    socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\n${reason}\n`);
  };
  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const origin = req.headers.origin;
    if (origin !== undefined && !originAllowed(origin)) {
      log(`refused a connection from origin ${JSON.stringify(origin).slice(0, 200)} (not in allowedOrigins)`);
      refuse(socket, 403, 'Forbidden');
      return;
    }
    const admitted = options.authorize
      ? Promise.race([
          Promise.resolve().then(() => options.authorize!(req)),
          new Promise<boolean>((resolve) => setTimeout(() => resolve(false), AUTHORIZE_TIMEOUT_MS).unref()),
        ])
      : Promise.resolve(true);
    admitted.then(
      (ok) => {
        if (!ok) return refuse(socket, 401, 'Unauthorized');
        wss.handleUpgrade(req, socket as Socket, head, (ws) => open(ws, clientIdOf(req)));
      },
      () => refuse(socket, 401, 'Unauthorized'),
    );
  });

  function busy(ws: WebSocket, detail: string): void {
    ws.send(errorFrame(1, 'ENCLAVE_BUSY', detail));
    ws.close(1013, 'busy');
    setTimeout(() => ws.terminate(), 2_000).unref();
  }

  function open(ws: WebSocket, client: string): void {
    ws.on('error', () => {
      // Broken sockets end in 'close', handled below.
    });
    if (sessions.size >= maxSessions) {
      busy(ws, `the enclave-server runs its maximum of ${maxSessions} sessions`);
      return;
    }
    if ((perClient.get(client) ?? 0) >= maxSessionsPerClient) {
      log(`refused a session of client ${client.slice(0, 100)}: it has ${maxSessionsPerClient} open`);
      busy(ws, `this client already has its maximum of ${maxSessionsPerClient} sessions on the enclave-server`);
      return;
    }
    const id = nextId++;
    const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const s: Session = { id, client, ws, child, exited: false };
    sessions.set(id, s);
    perClient.set(client, (perClient.get(client) ?? 0) + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const n = (perClient.get(client) ?? 1) - 1;
      if (n > 0) perClient.set(client, n);
      else perClient.delete(client);
    };
    log(`session ${id}: started ${backend} enclave program (pid ${child.pid ?? '?'})`);
    // A connection that never speaks holds a slot for nothing: it must start within the deadline.
    let spoke = false;
    const handshake = setTimeout(() => {
      if (!spoke) {
        log(`session ${id}: nothing sent within ${handshakeTimeoutMs} ms, closing`);
        ws.close(1008, 'no challenge');
      }
    }, handshakeTimeoutMs);
    handshake.unref();
    let idle: ReturnType<typeof setTimeout> | undefined;
    const touch = () => {
      if (idle) clearTimeout(idle);
      idle = setTimeout(() => {
        log(`session ${id}: idle for ${idleTimeoutMs} ms, closing`);
        ws.close(1000, 'idle');
      }, idleTimeoutMs);
      idle.unref();
    };
    touch();

    // Program → client.
    const reader = new FrameReader();
    let reported = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (reported) return;
      reader.push(chunk);
      try {
        for (let f = reader.next(); f; f = reader.next()) {
          if (ws.readyState === ws.OPEN) ws.send(f, { binary: true });
        }
      } catch (e) {
        // Reported, never forwarded nor waited on: the client's run fails at once with a reason.
        log(`session ${id}: ${(e as Error).message}; ending the session`);
        reported = true;
        if (ws.readyState === ws.OPEN) {
          const detail = `the enclave program wrote a frame over the link's limit of ${MAX_LINK_FRAME} bytes`;
          ws.send(errorFrame(0, 'TOO_LARGE', detail));
          ws.send(errorFrame(1, 'TOO_LARGE', detail));
          ws.close(1011, 'enclave program failed');
        }
        child.kill('SIGKILL');
        return;
      }
      touch();
      if (ws.bufferedAmount > 8 * MAX_LINK_FRAME / 16 && !child.stdout.isPaused()) {
        // The client reads slowly: stop reading the program until it catches up.
        child.stdout.pause();
        const poll = setInterval(() => {
          if (ws.readyState !== ws.OPEN || ws.bufferedAmount < MAX_LINK_FRAME / 16) {
            clearInterval(poll);
            child.stdout.resume();
          }
        }, 2);
      }
    });
    let partial = '';
    child.stderr.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop()!.slice(-4096);
      for (const line of lines) if (line.trim()) log(`session ${id}: ${line.trim()}`);
    });
    child.stdin.on('error', () => {
      // The program exited before reading everything; 'close' reports it.
    });
    child.on('error', (e) => {
      log(`session ${id}: cannot run ${program}: ${e.message}`);
    });
    child.on('close', (code, signal) => {
      s.exited = true;
      if (idle) clearTimeout(idle);
      clearTimeout(handshake);
      sessions.delete(id);
      release();
      const how = signal ? `signal ${signal}` : `exit code ${code}`;
      log(`session ${id}: enclave program ended (${how})`);
      if (ws.readyState === ws.OPEN && !reported) {
        // The program left first: tell the client why, so its run fails now, not at a deadline.
        const detail = `the enclave program ended (${how})`;
        ws.send(errorFrame(0, 'ENCLAVE_PROGRAM_EXITED', detail));
        ws.send(errorFrame(1, 'ENCLAVE_PROGRAM_EXITED', detail));
        ws.close(code === 0 ? 1000 : 1011, 'enclave program ended');
        setTimeout(() => ws.terminate(), 2_000).unref();
      }
    });

    // Client → program.
    ws.on('message', (raw: RawData, isBinary: boolean) => {
      const frame = Array.isArray(raw) ? Buffer.concat(raw) : Buffer.isBuffer(raw) ? raw : Buffer.from(raw as ArrayBuffer);
      if (!isBinary || frame.length < 2 || frame.length > MAX_LINK_FRAME || frame[0]! > 1) {
        log(`session ${id}: malformed frame from the client; closing`);
        ws.close(1008, 'malformed frame');
        return;
      }
      if (s.exited || !child.stdin.writable) return;
      spoke = true;
      touch();
      const head = Buffer.alloc(4);
      head.writeUInt32LE(frame.length, 0);
      child.stdin.write(head);
      if (!child.stdin.write(frame)) {
        ws.pause();
        child.stdin.once('drain', () => ws.resume());
      }
    });
    ws.on('close', () => {
      if (idle) clearTimeout(idle);
      clearTimeout(handshake);
      if (s.exited) return;
      // The client left: end the program's input (it exits; mid-job it reports
      // PEER_DISCONNECTED), and make sure it does not linger.
      child.stdin.end();
      const kill = setTimeout(() => {
        if (!s.exited) child.kill('SIGKILL');
      }, KILL_AFTER_MS);
      kill.unref();
      child.once('close', () => clearTimeout(kill));
    });
  }

  await new Promise<void>((resolve, reject) => {
    http.once('error', (e) => reject(unavailable(`cannot listen on ${host}:${options.port ?? DEFAULT_ENCLAVE_PORT}: ${e.message}`)));
    http.listen(options.port ?? DEFAULT_ENCLAVE_PORT, host, () => {
      http.removeAllListeners('error');
      resolve();
    });
  });
  http.on('error', () => {
    // After listening, errors concern single connections; they must not crash the process.
  });
  const { port } = http.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  const url = `ws://${urlHost}:${port}`;
  if (backend === 'simulation') {
    log(
      '*** SIMULATION BACKEND — NOT AN ENCLAVE. No hardware protection: whoever runs this server can read ' +
        "every garbler's seed (hence its inputs) and every evaluator's x2⁰ share. Clients refuse it unless " +
        'they set allowSimulatedEnclave: true. For development and tests only. ***',
    );
    log(`measurement ${measurement} (${program})${signer ? `, evidence signer ${signer}` : ', a fresh evidence key per session'}`);
  } else {
    log(`Open Enclave backend: ${program} with ${args[0]}; clients pin the image's MRSIGNER, product id and SVN (oesign dump -e IMAGE)`);
  }
  log(
    `limits: ${maxSessions} sessions, ${maxSessionsPerClient} per client; ${maxMemory >> 20} MiB per job ` +
      `(at most about ${(maxSessions * maxMemory) / 2 ** 30} GiB for all programs); browser origins: ` +
      `${origins.length ? origins.join(', ') : 'none'}`,
  );
  log(`listening on ${url}`);

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    backend,
    simulated: backend === 'simulation',
    measurement,
    signer,
    program,
    sessions: () => [...sessions.values()].map((s) => ({ id: s.id, pid: s.child.pid })),
    close() {
      closing ??= (async () => {
        const ended = [...sessions.values()].map(
          (s) =>
            new Promise<void>((resolve) => {
              if (s.exited) return resolve();
              s.child.once('close', () => resolve());
              s.ws.close(1001, 'server closing');
              s.child.stdin.end();
              setTimeout(() => {
                if (!s.exited) s.child.kill('SIGKILL');
              }, 1_000).unref();
            }),
        );
        await Promise.all(ended);
        for (const client of wss.clients) client.terminate();
        await new Promise<void>((resolve) => wss.close(() => resolve()));
        await new Promise<void>((resolve) => http.close(() => resolve()));
      })();
      return closing;
    },
  };
}
