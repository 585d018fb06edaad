/**
 * What both teleport protocols (`teleport-yao` and teleported random OT) share: the `enclave`
 * options, the pinned policy, and setting up an attested session on either side.
 *
 * The **evaluator** (ROT receiver) reaches the enclave-server (`url`): one WebSocket is one
 * attested session, reused for every job of the SDK session. The **garbler** (ROT sender) never
 * talks to the server: the evaluator relays the enclave's evidence to it and its sealed seeds to
 * the enclave. Both check the evidence against their own pinned policy and their own fresh nonce
 * (the evidence answers both, so it cannot be a recording); nothing about the enclave is taken
 * from the server or the peer on trust. Both parties' secrets — the garbler's seed, the
 * evaluator's k2 or x2⁰ — are sealed to the attested enclave key, and so are the enclave's
 * replies that would reveal the evaluator's input or outputs: the server's host and the network
 * see neither. All checking and sealing is Rust (`webmpc_teleport`), called through Wasm.
 *
 * A plaintext `ws://` URL is accepted only to a loopback host (the server beside the evaluator)
 * unless `allowPlaintextWebSocket` is set: elsewhere use `wss://`.
 *
 * Browser-safe: no Node imports.
 */
import { concatBytes } from '../bytes.js';
import { WebmpcError } from '../errors.js';
import type { Transport } from '../net/transport.js';
import type { WebSocketConstructor } from '../net/websocket-like.js';
import { checkEnclaveUrl, EnclaveLink, withEnclaveLink } from './link.js';

/** The enclave a teleport protocol uses, and what this party accepts of it. */
export interface EnclaveOptions {
  /**
   * Evaluator / ROT receiver only: the enclave-server's WebSocket URL: `wss://HOST:PORT`, or
   * `ws://` to a loopback host (`127.0.0.0/8`, `localhost`, `[::1]`).
   */
  url?: string;
  /**
   * Evaluator: accept a plaintext `ws://` URL to a host other than loopback. Default false
   * (`INVALID_ARGUMENT`): the secrets are sealed either way, but on a plaintext connection the
   * network sees the circuit and the traffic's shape and can cut or stall the session.
   */
  allowPlaintextWebSocket?: boolean;
  /** Evaluator only: the WebSocket constructor (Node 20: `await nodeWebSocket()` from `webmpc/net/node`). */
  WebSocket?: WebSocketConstructor;
  /** Both parties: what the enclave's evidence must show. */
  policy: EnclavePolicy;
  /**
   * Both parties: accept the **simulation backend** (`webmpc enclave-server --backend
   * simulation`), which has no hardware protection: whoever runs the server can read the
   * garbler's seeds (hence its inputs) and the evaluator's x2⁰ shares. Default false: its
   * evidence is refused with `SIMULATED_ENCLAVE_REFUSED`. When true, the simulation program must
   * be pinned in `policy.simulatedMeasurements`.
   */
  allowSimulatedEnclave?: boolean;
  /** Evaluator: deadline to reach the server (ms, default 10 000). */
  connectTimeoutMs?: number;
  /** Evaluator: deadline for each answer of the enclave (ms, default 60 000). */
  recvTimeoutMs?: number;
}

/**
 * A pinned evidence policy. Simulated and Open Enclave pins are kept apart: anyone can sign
 * simulated evidence claiming any measurement, so a simulated enclave is only ever checked
 * against `simulatedMeasurements`, never against an Open Enclave MRENCLAVE in `measurements`.
 */
export interface EnclavePolicy {
  /**
   * Open Enclave: the accepted MRENCLAVEs, 32 bytes each (hex or bytes; `oesign dump`). Open
   * Enclave evidence also needs a verifier (`oe_verify_evidence`), which the SDK cannot run in
   * Wasm: it is refused with `EVIDENCE_REJECTED`, reason `no-verifier`, until one is plugged in.
   */
  measurements?: readonly (string | Uint8Array)[];
  /**
   * Simulation backend: the accepted programs' SHA-256 (`webmpc enclave-server
   * --print-measurement`), checked only with `allowSimulatedEnclave: true`.
   */
  simulatedMeasurements?: readonly (string | Uint8Array)[];
  /**
   * Simulation backend only: the accepted software evidence keys (the server's
   * `--evidence-key`; `--print-identity` shows its public key). Default: any.
   */
  simulationSigners?: readonly (string | Uint8Array)[];
}

/**
 * The policy as the Wasm calls take it (`measurements`: the simulated ones; the Open Enclave pins
 * cannot be checked in Wasm, see {@link EnclavePolicy.measurements}).
 */
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

/**
 * Checks the `enclave` options of a party in role `role` (before anything is sent): the policy
 * for both, the URL for the evaluator.
 */
export function checkEnclaveOptions(options: unknown, role: 'garbler' | 'evaluator', protocol: string): EnclaveOptions {
  if (typeof options !== 'object' || options === null) {
    throw invalid(
      `${protocol} needs the enclave option: { url (the evaluator), policy: { measurements | simulatedMeasurements }, allowSimulatedEnclave? }`,
    );
  }
  const o = options as EnclaveOptions;
  if (o.allowSimulatedEnclave !== undefined && typeof o.allowSimulatedEnclave !== 'boolean') {
    throw invalid('enclave.allowSimulatedEnclave must be a boolean');
  }
  if (o.allowPlaintextWebSocket !== undefined && typeof o.allowPlaintextWebSocket !== 'boolean') {
    throw invalid('enclave.allowPlaintextWebSocket must be a boolean');
  }
  policyBytes(o);
  if (role === 'evaluator') {
    const bad = checkEnclaveUrl(o.url, o.allowPlaintextWebSocket);
    if (bad) throw invalid(`the evaluator of ${protocol} needs a usable enclave.url: ${bad}`);
  }
  return o;
}

function pins(what: string, list: unknown): Uint8Array[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw invalid(`${what} must be an array`);
  return list.map((m) => digest(`each ${what} entry`, m));
}

/** The policy in the form the Wasm calls take. */
export function policyBytes(o: EnclaveOptions): PolicyBytes {
  const p = o.policy;
  if (typeof p !== 'object' || p === null) throw invalid('enclave.policy must be an object with the pinned measurements');
  const oe = pins('enclave.policy.measurements', p.measurements);
  const simulated = pins('enclave.policy.simulatedMeasurements', p.simulatedMeasurements);
  if (oe.length + simulated.length === 0) {
    throw invalid('enclave.policy must list at least one pinned measurement (measurements or simulatedMeasurements)');
  }
  const allowSimulated = o.allowSimulatedEnclave === true;
  if (allowSimulated && simulated.length === 0) {
    throw invalid(
      'allowSimulatedEnclave: true needs the simulation program pinned in enclave.policy.simulatedMeasurements ' +
        '(policy.measurements pins Open Enclave MRENCLAVEs only, never a simulated enclave)',
    );
  }
  const signers = p.simulationSigners === undefined ? undefined : concatBytes(pins('enclave.policy.simulationSigners', p.simulationSigners));
  return { allowSimulated, measurements: concatBytes(simulated), signers };
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
    ...(o.allowPlaintextWebSocket ? { allowPlaintextWebSocket: true } : {}),
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
  const oe = concatBytes(pins('enclave.policy.measurements', o.policy.measurements));
  const plain = o.allowPlaintextWebSocket ? 'plain' : '';
  return [o.url ?? '', p.allowSimulated ? 'sim' : 'hw', hex(p.measurements), hex(oe), hex(p.signers), plain].join('|');
}
