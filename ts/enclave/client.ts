/**
 * What both teleport protocols (`teleport-yao` and teleported random OT) share: the `enclave`
 * options, the pinned policy, and setting up an attested session on either side.
 *
 * The **evaluator** (ROT receiver) reaches the enclave-server (`url`): one WebSocket is one
 * attested session, reused for every job of the SDK session. The **garbler** (ROT sender) never
 * talks to the server: the evaluator relays the enclave's evidence to it and its sealed seeds to
 * the enclave. Both check the evidence against their own pinned policy; nothing about the
 * enclave is taken from the server or the peer on trust. All checking and sealing is Rust
 * (`webmpc_teleport`), called through Wasm.
 *
 * Browser-safe: no Node imports.
 */
import { WebmpcError } from '../errors.js';
import type { Transport } from '../net/transport.js';
import type { WebSocketConstructor } from '../net/websocket-like.js';
import { EnclaveLink, withEnclaveLink } from './link.js';

/** The enclave a teleport protocol uses, and what this party accepts of it. */
export interface EnclaveOptions {
  /** Evaluator / ROT receiver only: the enclave-server's WebSocket URL (`ws://HOST:PORT`). */
  url?: string;
  /** Evaluator only: the WebSocket constructor (Node 20: `await nodeWebSocket()` from `webmpc/net/node`). */
  WebSocket?: WebSocketConstructor;
  /** Both parties: what the enclave's evidence must show. */
  policy: EnclavePolicy;
  /**
   * Both parties: accept the **simulation backend** (`webmpc enclave-server --backend
   * simulation`), which has no hardware protection: whoever runs the server can read the
   * garbler's seeds (hence its inputs) and the evaluator's x2⁰ shares. Default false: its
   * evidence is refused with `SIMULATED_ENCLAVE_REFUSED`.
   */
  allowSimulatedEnclave?: boolean;
  /** Evaluator: deadline to reach the server (ms, default 10 000). */
  connectTimeoutMs?: number;
  /** Evaluator: deadline for each answer of the enclave (ms, default 60 000). */
  recvTimeoutMs?: number;
}

/** A pinned evidence policy. */
export interface EnclavePolicy {
  /**
   * The accepted enclave measurements, 32 bytes each (hex or bytes): the simulation program's
   * SHA-256 (`webmpc enclave-server --print-measurement`), or an Open Enclave MRENCLAVE. Required:
   * an enclave whose code is not pinned protects nothing.
   */
  measurements: readonly (string | Uint8Array)[];
  /**
   * Simulation backend only: the accepted software evidence keys (the server's
   * `--evidence-key`; `--print-identity` shows its public key). Default: any.
   */
  simulationSigners?: readonly (string | Uint8Array)[];
}

/** The policy as the Wasm calls take it. */
export interface PolicyBytes {
  readonly allowSimulated: boolean;
  readonly measurements: Uint8Array;
  readonly signers: Uint8Array | undefined;
}

function invalid(message: string): WebmpcError {
  return new WebmpcError('INVALID_ARGUMENT', message);
}

function digest(what: string, v: unknown): Uint8Array {
  if (v instanceof Uint8Array && v.length === 32) return v;
  if (typeof v === 'string' && /^[0-9a-fA-F]{64}$/.test(v)) return Uint8Array.from(v.match(/../g)!, (h) => parseInt(h, 16));
  throw invalid(`${what} must be 32 bytes (a Uint8Array or 64 hex digits)`);
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(32 * parts.length);
  parts.forEach((p, i) => out.set(p, 32 * i));
  return out;
}

/**
 * Checks the `enclave` options of a party in role `role` (before anything is sent): the policy
 * for both, the URL for the evaluator.
 */
export function checkEnclaveOptions(options: unknown, role: 'garbler' | 'evaluator', protocol: string): EnclaveOptions {
  if (typeof options !== 'object' || options === null) {
    throw invalid(`${protocol} needs the enclave option: { url (the evaluator), policy: { measurements }, allowSimulatedEnclave? }`);
  }
  const o = options as EnclaveOptions;
  policyBytes(o);
  if (o.allowSimulatedEnclave !== undefined && typeof o.allowSimulatedEnclave !== 'boolean') {
    throw invalid('enclave.allowSimulatedEnclave must be a boolean');
  }
  if (role === 'evaluator' && (typeof o.url !== 'string' || !/^wss?:\/\//.test(o.url))) {
    throw invalid(`the evaluator of ${protocol} needs enclave.url, the enclave-server's ws:// or wss:// URL`);
  }
  return o;
}

/** The policy in the form the Wasm calls take. */
export function policyBytes(o: EnclaveOptions): PolicyBytes {
  const p = o.policy;
  if (typeof p !== 'object' || p === null || !Array.isArray(p.measurements) || p.measurements.length === 0) {
    throw invalid('enclave.policy.measurements must list at least one pinned measurement');
  }
  const measurements = concat(p.measurements.map((m) => digest('each enclave.policy.measurements entry', m)));
  let signers: Uint8Array | undefined;
  if (p.simulationSigners !== undefined) {
    if (!Array.isArray(p.simulationSigners)) throw invalid('enclave.policy.simulationSigners must be an array');
    signers = concat(p.simulationSigners.map((s) => digest('each enclave.policy.simulationSigners entry', s)));
  }
  return { allowSimulated: o.allowSimulatedEnclave === true, measurements, signers };
}

/** The evaluator's connection: its link and the view of its transport the Wasm protocol uses. */
export interface EvaluatorLink {
  readonly link: EnclaveLink;
  readonly view: Transport;
  /** The view's party index of the enclave link. */
  readonly enclaveParty: number;
}

/**
 * Opens the evaluator's link to the enclave-server. The link closes when the session's transport
 * does (a failed or finished session must not leave a socket or an enclave process behind).
 */
export async function openEvaluatorLink(transport: Transport, o: EnclaveOptions, signal?: AbortSignal): Promise<EvaluatorLink> {
  const link = await EnclaveLink.connect({
    url: o.url!,
    ...(o.WebSocket ? { WebSocket: o.WebSocket } : {}),
    ...(o.connectTimeoutMs !== undefined ? { connectTimeoutMs: o.connectTimeoutMs } : {}),
    ...(o.recvTimeoutMs !== undefined ? { recvTimeoutMs: o.recvTimeoutMs } : {}),
    ...(signal ? { signal } : {}),
  });
  void transport.closed.then(() => link.close());
  return { link, view: withEnclaveLink(transport, link), enclaveParty: transport.parties };
}

/** A key that tells whether two option sets describe the same enclave and policy. */
export function enclaveKey(o: EnclaveOptions): string {
  const p = policyBytes(o);
  const hex = (b: Uint8Array | undefined) => (b ? Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('') : '-');
  return [o.url ?? '', p.allowSimulated ? 'sim' : 'hw', hex(p.measurements), hex(p.signers)].join('|');
}
