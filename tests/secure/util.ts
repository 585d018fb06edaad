// Shared setup for the secure-channel tests: identities, a mesh, and secureTransport on every party.
import { createHash, randomFillSync } from 'node:crypto';
import { expect } from 'vitest';
import { TransportError } from '../../dist/errors.js';
import {
  generateIdentity,
  secureTransport,
  type Identity,
  type SecureTransport,
  type SecureTransportOptions,
} from '../../dist/secure/index.js';
import { createMesh, type Mesh, type MeshOptions } from './pair.js';

export function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Random bytes of any size (node:crypto; randomFillSync handles at most 2^31−1 per call). */
export function randomData(n: number): Uint8Array {
  const out = new Uint8Array(n);
  const step = 1 << 30;
  for (let at = 0; at < n; at += step) randomFillSync(out.subarray(at, Math.min(n, at + step)));
  return out;
}

export interface Party {
  identity: Identity;
  result: PromiseSettledResult<SecureTransport>;
}

type Overrides = { [K in keyof SecureTransportOptions]?: SecureTransportOptions[K] | undefined };

export interface SetupOptions extends MeshOptions {
  /**
   * Options per party, over the defaults (pinned to everyone's real key, session 'room-1');
   * `peers: undefined` removes the default pins.
   */
  optionsFor?: (party: number, identities: Identity[]) => Overrides;
  identities?: Identity[];
}

/** Runs secureTransport on every party of a fresh mesh and waits for all of them to settle. */
export async function setup(parties: number, options: SetupOptions = {}): Promise<{
  mesh: Mesh;
  identities: Identity[];
  results: PromiseSettledResult<SecureTransport>[];
}> {
  const identities = options.identities ?? (await Promise.all(Array.from({ length: parties }, () => generateIdentity())));
  const mesh = createMesh(parties, options);
  const results = await Promise.allSettled(
    mesh.transports.map((inner, party) => {
      const merged: Record<string, unknown> = {
        identity: identities[party]!,
        sessionId: 'room-1',
        trust: 'pinned',
        peers: identities.map((id) => id.publicKey),
        handshakeTimeoutMs: 5_000,
        ...options.optionsFor?.(party, identities),
      };
      for (const key of Object.keys(merged)) if (merged[key] === undefined) delete merged[key];
      return secureTransport(inner, merged as unknown as SecureTransportOptions);
    }),
  );
  return { mesh, identities, results };
}

/** Every party's transport, failing the test if a handshake failed. */
export function fulfilled(results: PromiseSettledResult<SecureTransport>[]): SecureTransport[] {
  return results.map((r, i) => {
    if (r.status === 'rejected') throw new Error(`party ${i} failed its handshake: ${String(r.reason)}`);
    return r.value;
  });
}

/** Asserts that `result` rejected with a TransportError of `code`. */
export function expectCode(result: PromiseSettledResult<unknown> | undefined, code: string): void {
  expect(result?.status).toBe('rejected');
  const reason = (result as PromiseRejectedResult).reason as unknown;
  expect(reason).toBeInstanceOf(TransportError);
  expect((reason as TransportError).code).toBe(code);
}

/** Asserts that `promise` rejects with a TransportError of `code`. */
export async function expectReject(promise: Promise<unknown>, code: string): Promise<TransportError> {
  const [result] = await Promise.allSettled([promise]);
  expectCode(result, code);
  return (result as PromiseRejectedResult).reason as TransportError;
}

export async function closeAll(transports: { close(): Promise<void> }[]): Promise<void> {
  await Promise.all(transports.map((t) => t.close()));
}
