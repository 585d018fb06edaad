/** Small helpers shared by the session and the protocol modules. */
import { concatBytes } from '../bytes.js';

/** SHA-256 of the concatenation of `parts` (Web Crypto: Node 20+ and browsers). */
export async function sha256(...parts: Uint8Array[]): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', concatBytes(parts) as Uint8Array<ArrayBuffer>));
}

/** UTF-8 bytes of `s`. */
export function utf8(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}

/**
 * The session id of parallel instance `index` of an operation whose session id is `sessionId`:
 * SHA-256 of the id and `instance/<index>`, the same at every party and different for every
 * instance, so no two instances share a key or a tweak.
 */
export function instanceSessionId(sessionId: Uint8Array, index: number): Promise<Uint8Array> {
  return sha256(sessionId, utf8(`instance/${index}`));
}

/** `1 byte`, `2 bytes`: a count with its noun in the right number. */
export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/**
 * A protocol module's `localOptions` for bytes that go to the engine worker beside the agreed
 * roles, under the symbol key `key` (only their digest is among the roles the parties compare):
 * a symbol key would not survive the structured clone, so they travel on their own.
 */
export function bytesBesideRoles(key: symbol): { send(roles: object): unknown; receive(roles: object, local: unknown): Promise<object> } {
  return {
    send(roles: object): unknown {
      return (roles as Record<symbol, unknown>)[key];
    },
    async receive(roles: object, local: unknown): Promise<object> {
      return local instanceof Uint8Array ? { ...roles, [key]: local } : roles;
    },
  };
}
