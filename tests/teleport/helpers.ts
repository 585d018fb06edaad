// Shared by the teleport tests: an enclave-server (simulation backend) started from the built
// package, the enclave options that accept it, two parties running teleport-yao over in-memory
// transports, and a WebSocket proxy that edits the enclave's frames (the model of a malicious
// enclave) between the evaluator and the server.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { afterAll, beforeAll } from 'vitest';
import { createMemoryTransports, init, prepareCircuit, session, type PreparedCircuit, type Session, type Transport } from '../../dist/index.js';
import type { EnclaveOptions } from '../../dist/enclave/index.js';
import { startEnclaveServer, type EnclaveServer, type EnclaveServerOptions } from '../../dist/enclave/server.js';
import { nodeWebSocket } from '../../dist/net/node.js';

/** The `ws` client (loaded once: `ws` is an optional peer dependency of the package). */
const NodeWebSocket = await nodeWebSocket();
import { DIST } from '../helpers.js';

export const CIRCUITS = process.env.WEBMPC_CIRCUITS ?? '/work/shared/circuits/bristol_fashion';
export const PROGRAM = `${DIST}native/${process.platform}-${process.arch}/webmpc-enclave-program`;

/** SHA-256 of the shipped program, computed here (what a client pins, checked out of band). */
export function programMeasurement(): string {
  return createHash('sha256').update(readFileSync(PROGRAM)).digest('hex');
}

export function circuitFile(name: string): PreparedCircuit {
  return prepareCircuit(readFileSync(`${CIRCUITS}/${name}`, 'utf8'));
}

/**
 * Registers the hooks of a test file that uses one server: the SDK initialised and a server
 * started before its tests, the server closed after them. Returns the server's getter.
 */
export function serverForFile(options: Partial<EnclaveServerOptions> = {}): () => EnclaveServer & { lines: string[] } {
  let server: (EnclaveServer & { lines: string[] }) | undefined;
  beforeAll(async () => {
    await init();
    server = await startServer(options);
  });
  afterAll(async () => {
    await server?.close();
  });
  return () => server!;
}

export async function startServer(options: Partial<EnclaveServerOptions> = {}): Promise<EnclaveServer & { lines: string[] }> {
  const lines: string[] = [];
  const server = await startEnclaveServer({ backend: 'simulation', port: 0, log: (l) => lines.push(l), ...options });
  return Object.assign(server, { lines });
}

/** Enclave options that accept `server`'s simulated enclave (unless overridden). */
export function enclaveFor(server: { url: string; measurement: string | undefined }, over: Partial<EnclaveOptions> = {}): EnclaveOptions {
  return {
    url: server.url,
    WebSocket: NodeWebSocket,
    policy: { simulatedMeasurements: [server.measurement!] },
    allowSimulatedEnclave: true,
    recvTimeoutMs: 20_000,
    ...over,
  };
}

export interface Pair {
  sessions: [Session, Session];
  transports: [Transport, Transport];
  close(): Promise<void>;
}

/** Two sessions over in-memory transports (`worker: false`: computing on this thread). */
export async function pair(recvTimeoutMs = 20_000, options: { worker?: boolean } = {}): Promise<Pair> {
  const transports = createMemoryTransports(2, { recvTimeoutMs }) as [Transport, Transport];
  const sessions = (await Promise.all(transports.map((t, p) => session({ transport: t, party: p, parties: 2, ...options })))) as [Session, Session];
  return {
    sessions,
    transports,
    close: async () => {
      await Promise.all(sessions.map((s) => s.close().catch(() => {})));
    },
  };
}

export const hex = (b: Uint8Array | undefined) => (b ? Buffer.from(b).toString('hex') : undefined);
export const unhex = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));

/** Settles both parties' promises; the first rejection does not hide the other's outcome. */
export async function both<A, B>(a: Promise<A>, b: Promise<B>) {
  const [x, y] = await Promise.allSettled([a, b]);
  return [x, y] as const;
}

/**
 * A WebSocket proxy in front of `target`: frames from the server to the client pass through
 * `edit(frame, index)` (index counts the server's frames on that connection, from 0), which may
 * change them in place. Frames from the client pass unchanged.
 */
export async function tamperingProxy(target: string, edit: (frame: Buffer, index: number) => void) {
  const http = createServer();
  const wss = new WebSocketServer({ server: http, maxPayload: 1 << 25 });
  wss.on('connection', (client) => {
    const upstream = new WebSocket(target, { maxPayload: 1 << 25 });
    const early: Buffer[] = [];
    let index = 0;
    upstream.on('message', (data: Buffer) => {
      const f = Buffer.from(data);
      edit(f, index++);
      if (client.readyState === client.OPEN) client.send(f);
    });
    upstream.on('open', () => early.splice(0).forEach((f) => upstream.send(f)));
    client.on('message', (data: Buffer) => (upstream.readyState === upstream.OPEN ? upstream.send(data) : early.push(Buffer.from(data))));
    upstream.on('close', () => client.close());
    client.on('close', () => upstream.close());
    upstream.on('error', () => client.terminate());
    client.on('error', () => upstream.terminate());
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
  const url = `ws://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    url,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}

/** Link-frame tags of the enclave's messages (`enclave-server/README.md`). */
export const TAG = { INPUT_LABELS: 0x82, TABLES: 0x83, DECODING: 0x84, ROT_CHUNK: 0x85, ERROR: 0xee } as const;
