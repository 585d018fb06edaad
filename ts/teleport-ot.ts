/**
 * **Teleported random OT** (Lu et al., ESORICS 2021, Fig. 4) between two parties over any
 * {@link Transport}, beside `ot.ts`'s KOS: the receiver's enclave (an enclave-server it reaches)
 * expands the sender's sealed seed and the receiver's seed into the receiver's ROT outputs, so
 * the sender sends one sealed seed per call (plus, in malicious mode, 32 bytes per 65,536 OTs),
 * whatever the number of OTs. All cryptography is Rust (`webmpc_teleport`) through Wasm.
 *
 * ```ts
 * const enclave = { url: 'ws://127.0.0.1:8790', policy: { simulatedMeasurements: [PINNED] }, allowSimulatedEnclave: true };
 * const [s, r] = await Promise.all([
 *   teleportOtSender({ transport: a, peer: 1, sessionId, enclave, mode: 'malicious' }),
 *   teleportOtReceiver({ transport: b, peer: 0, sessionId, enclave, mode: 'malicious' }),
 * ]);
 * const [{ m0, m1 }, { choices, messages }] = await Promise.all([s.sendRandom(1e6), r.receiveRandom(1e6)]);
 * ```
 *
 * One setup is one attested session (the evidence checked, one X25519 key agreed), reused by
 * every call; {@link teleportedRandomOt} does setup, one call and cleanup at once.
 *
 * What it protects against: `'semi-honest'` — each party's outputs stay private against the other
 * and against a curious enclave that talks to neither; `'malicious'` — the receiver checks every
 * chunk of the enclave's output against the sender's τ, so a deviating enclave or sender makes it
 * abort (`ENCLAVE_CHECK_FAILED`, check `rot-tau`); outputs are then tweaked hashes, so the
 * receiver's view of the σ's it checks does not reveal the messages it did not choose. Both seeds
 * reach the enclave sealed to its attested key and the receiver's outputs come back sealed to the
 * receiver, so the enclave-server's host and the network learn neither messages nor choices.
 * Never against the enclave colluding with a party (it knows both seeds, hence every message and
 * choice bit), and the simulation backend protects nothing from its host (the receiver's host
 * can read both seeds).
 */
import { checkEnclaveOptions, openEvaluatorLink, policyBytes, type EnclaveOptions } from './enclave/client.js';
import type { EnclaveLink } from './enclave/link.js';
import { loadModule, noteTrap } from './engine/modules.js';
import { ProtocolAbort, WebmpcError } from './errors.js';
import type { Transport } from './net/transport.js';
import { MAX_OTS_PER_CALL } from './ot.js';
import type { TeleportMode } from './protocols/teleport-yao.js';

export type { TeleportMode } from './protocols/teleport-yao.js';
export type { EnclaveOptions, EnclavePolicy } from './enclave/client.js';

// From the teleport module (webmpc_teleport_bg.wasm), loaded on the first setup.
type RawGarbler = import('./wasm-gen/webmpc_teleport.js').TeleportGarbler;
type RawEvaluator = import('./wasm-gen/webmpc_teleport.js').TeleportEvaluator;

/** Options of both sides. */
export interface TeleportOtOptions {
  transport: Transport;
  /** The other party's index on the transport. */
  peer: number;
  /** 32 bytes both parties agree on, unique per instance (job ids derive from it). */
  sessionId: Uint8Array;
  /** `'semi-honest'` or `'malicious'` (default `'malicious'`); both parties the same. */
  mode?: TeleportMode;
  /** The enclave: `url` (the receiver), `policy` and `allowSimulatedEnclave` (both). */
  enclave: EnclaveOptions;
}

/** Options of {@link teleportedRandomOt}. */
export interface TeleportedRandomOtOptions extends TeleportOtOptions {
  role: 'sender' | 'receiver';
  /** Number of random OTs. */
  count: number;
}

function invalid(message: string): WebmpcError {
  return new WebmpcError('INVALID_ARGUMENT', message);
}

function checkCount(n: number): void {
  if (!Number.isSafeInteger(n) || n < 0 || n > MAX_OTS_PER_CALL) {
    throw invalid(`OT count must be an integer in [0, ${MAX_OTS_PER_CALL}]`);
  }
}

function checkCommon(o: TeleportOtOptions, role: 'garbler' | 'evaluator'): TeleportMode {
  if (typeof o !== 'object' || o === null) throw invalid('teleported OT needs an options object');
  if (!(o.sessionId instanceof Uint8Array) || o.sessionId.length !== 32) throw invalid('sessionId must be 32 bytes');
  const { party, parties } = o.transport;
  if (!Number.isInteger(o.peer) || o.peer < 0 || o.peer >= parties || o.peer === party) {
    throw invalid(`peer must be another party's index in [0, ${parties})`);
  }
  const mode = o.mode ?? 'malicious';
  if (mode !== 'semi-honest' && mode !== 'malicious') throw invalid("mode must be 'semi-honest' or 'malicious'");
  checkEnclaveOptions(o.enclave, role, 'teleported OT');
  return mode;
}

/** Runs a Wasm call; on a protocol verdict, closes the transport so the peer aborts too. */
async function run<T>(transport: Transport, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    // Every Wasm call here goes into the teleport module: a trap poisons that module.
    const e = noteTrap('teleport', err);
    if (e instanceof ProtocolAbort && e.code !== 'PARAMETER_MISMATCH') await transport.close(e);
    throw e;
  }
}

/** Guards the constructors: instances come from {@link teleportOtSender} / {@link teleportOtReceiver}. */
const CONSTRUCT: unique symbol = Symbol('webmpc.teleport-ot');

/** The sending side of a teleported-OT session (it never talks to the enclave-server). */
export class TeleportOtSender {
  readonly #raw: RawGarbler;
  readonly #transport: Transport;
  readonly #mode: TeleportMode;

  /** @internal */
  constructor(token: typeof CONSTRUCT, raw: unknown, transport: Transport, mode: TeleportMode) {
    if (token !== CONSTRUCT) throw new TypeError('use teleportOtSender() to create a TeleportOtSender');
    this.#raw = raw as RawGarbler;
    this.#transport = transport;
    this.#mode = mode;
  }

  /** `n` random OTs: `m0`, `m1` are `16·n` bytes each (OT j at bytes `16j..16j+16`). */
  async sendRandom(n: number): Promise<{ m0: Uint8Array; m1: Uint8Array }> {
    checkCount(n);
    const pairs = await run(this.#transport, () => this.#raw.sendRandom(n, this.#mode) as Promise<Uint8Array>);
    const m0 = new Uint8Array(16 * n);
    const m1 = new Uint8Array(16 * n);
    for (let j = 0; j < n; j++) {
      m0.set(pairs.subarray(32 * j, 32 * j + 16), 16 * j);
      m1.set(pairs.subarray(32 * j + 16, 32 * j + 32), 16 * j);
    }
    pairs.fill(0);
    return { m0, m1 };
  }

  /** Releases the Wasm-side session. */
  free(): void {
    this.#raw.free();
  }
}

/** The receiving side of a teleported-OT session, with its link to the enclave-server. */
export class TeleportOtReceiver {
  readonly #raw: RawEvaluator;
  readonly #transport: Transport;
  readonly #link: EnclaveLink;
  readonly #mode: TeleportMode;

  /** @internal */
  constructor(token: typeof CONSTRUCT, raw: unknown, transport: Transport, link: EnclaveLink, mode: TeleportMode) {
    if (token !== CONSTRUCT) throw new TypeError('use teleportOtReceiver() to create a TeleportOtReceiver');
    this.#raw = raw as RawEvaluator;
    this.#transport = transport;
    this.#link = link;
    this.#mode = mode;
  }

  /** `n` random OTs: random `choices` (one byte 0/1 per OT) and `m_{b_j}` (`16·n` bytes). */
  async receiveRandom(n: number): Promise<{ choices: Uint8Array; messages: Uint8Array }> {
    checkCount(n);
    return run(this.#transport, () => this.#raw.receiveRandom(n, this.#mode) as Promise<{ choices: Uint8Array; messages: Uint8Array }>);
  }

  /** Releases the Wasm-side session and closes the link (the server ends the enclave session). */
  async free(): Promise<void> {
    this.#raw.free();
    await this.#link.close();
  }
}

/** Sets up the sender: checks the enclave's evidence (relayed by the receiver) against its policy. */
export async function teleportOtSender(options: TeleportOtOptions): Promise<TeleportOtSender> {
  const mode = checkCommon(options, 'garbler');
  const p = policyBytes(options.enclave);
  const { transport, peer, sessionId } = options;
  const w = await loadModule('teleport');
  const raw = await run(
    transport,
    () => w.teleportGarblerConnect(transport, peer, sessionId, p.allowSimulated, p.measurements, p.signers) as Promise<RawGarbler>,
  );
  return new TeleportOtSender(CONSTRUCT, raw, transport, mode);
}

/** Sets up the receiver: opens the link to the enclave-server, checks the evidence, relays it. */
export async function teleportOtReceiver(options: TeleportOtOptions): Promise<TeleportOtReceiver> {
  const mode = checkCommon(options, 'evaluator');
  const p = policyBytes(options.enclave);
  const { transport, peer, sessionId } = options;
  const w = await loadModule('teleport');
  const { link, view, enclaveParty } = await run(transport, () => openEvaluatorLink(transport, options.enclave));
  try {
    const raw = await run(
      transport,
      () =>
        w.teleportEvaluatorConnect(view, peer, enclaveParty, sessionId, p.allowSimulated, p.measurements, p.signers) as Promise<RawEvaluator>,
    );
    return new TeleportOtReceiver(CONSTRUCT, raw, transport, link, mode);
  } catch (err) {
    await link.close();
    throw err;
  }
}

/**
 * `count` teleported random OTs in one go: sets up `role`'s side, runs one call, frees it. The
 * sender gets `{ m0, m1 }`, the receiver `{ choices, messages }`.
 */
export async function teleportedRandomOt(
  options: TeleportedRandomOtOptions & { role: 'sender' },
): Promise<{ m0: Uint8Array; m1: Uint8Array }>;
export async function teleportedRandomOt(
  options: TeleportedRandomOtOptions & { role: 'receiver' },
): Promise<{ choices: Uint8Array; messages: Uint8Array }>;
export async function teleportedRandomOt(
  options: TeleportedRandomOtOptions,
): Promise<{ m0: Uint8Array; m1: Uint8Array } | { choices: Uint8Array; messages: Uint8Array }> {
  checkCount(options?.count);
  if (options.role === 'sender') {
    const s = await teleportOtSender(options);
    try {
      return await s.sendRandom(options.count);
    } finally {
      s.free();
    }
  }
  if (options.role === 'receiver') {
    const r = await teleportOtReceiver(options);
    try {
      return await r.receiveRandom(options.count);
    } finally {
      await r.free();
    }
  }
  throw invalid("role must be 'sender' or 'receiver'");
}
