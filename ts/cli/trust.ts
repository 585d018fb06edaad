/**
 * `party`'s authentication of the other parties: pinned keys (`--peer-key`), the short
 * authentication string a person compares (`--confirm`, or a terminal), or none (`--insecure`);
 * decided before anything connects, and applied by the secure channel over the transport.
 */
import { createInterface } from 'node:readline';
import type { Transport } from '../net/transport.js';
import type { Identity, PeerVerification } from '../secure/index.js';
import { perParty } from './args.js';
import { UsageError } from './errors.js';
import { readIdentity } from './identity.js';

type Secure = typeof import('../secure/index.js');

export const TRUST_OPTIONS = {
  identity: { type: 'string' },
  'peer-key': { type: 'string', multiple: true },
  confirm: { type: 'boolean', default: false },
  insecure: { type: 'boolean', default: false },
} as const;

/** How the other parties are authenticated. */
export interface Trust {
  readonly mode: 'pinned' | 'confirm' | 'tofu';
  /** `--peer-key` per party (undefined where not pinned). */
  readonly keys: readonly (string | undefined)[];
}

/** Settles `--peer-key`, `--confirm` and `--insecure` (and whether stdin is a terminal). */
export function trustOf(
  values: { 'peer-key'?: string[] | undefined; confirm: boolean; insecure: boolean },
  parties: number,
  party: number,
): Trust {
  const keys = perParty(values['peer-key'], '--peer-key', 'HEX', parties, party);
  const keyed = keys.filter((k) => k !== undefined).length;
  const allKeyed = keyed === parties - 1;
  const given = [
    keyed > 0 && '--peer-key',
    values.confirm && (allKeyed || keyed === 0) && '--confirm',
    values.insecure && '--insecure',
  ].filter(Boolean);
  if (given.length > 1) throw new UsageError(`${given.join(' and ')} exclude each other`);
  if (allKeyed) return { mode: 'pinned', keys };
  if (values.insecure) return { mode: 'tofu', keys };
  if (values.confirm || process.stdin.isTTY) return { mode: 'confirm', keys };
  if (keyed > 0) {
    const missing = keys.flatMap((k, q) => (k === undefined && q !== party ? [q] : []));
    throw new UsageError(
      `cannot authenticate party ${missing.join(', ')}: pass --peer-key Q=HEX for every peer, or run in a terminal ` +
        '(or with --confirm) to compare the short authentication strings of the others',
    );
  }
  throw new UsageError(
    `cannot authenticate the other ${parties === 2 ? 'party' : 'parties'}: pass --peer-key HEX (its \`webmpc key\`), or run in a terminal to ` +
      'compare the short authentication string (--confirm reads the answer from stdin), or --insecure for experiments',
  );
}

/** This party's identity (`--identity FILE`, or a fresh one) and the pinned peer keys, parsed. */
export async function identities(
  secure: Secure,
  file: string | undefined,
  trust: Trust,
): Promise<{ identity: Identity; pinned: (Uint8Array | undefined)[] }> {
  const pinned = trust.keys.map((text) => {
    if (text === undefined) return undefined;
    try {
      return secure.publicKeyFromHex(text);
    } catch {
      throw new UsageError('--peer-key must be a 32-byte public key in hex (64 digits)');
    }
  });
  const identity = file !== undefined ? await readIdentity(secure, file) : await secure.generateIdentity();
  return { identity, pinned };
}

/**
 * The secure channel over `inner`: every other party authenticated as `trust` says before
 * anything else crosses. Says on stderr (`say`) how each one was authenticated.
 */
export async function authenticate(
  secure: Secure,
  inner: Transport,
  options: {
    identity: Identity;
    pinned: (Uint8Array | undefined)[];
    trust: Trust;
    room: string;
    timeoutMs: number;
    signal: AbortSignal;
    say: (line: string) => void;
  },
): Promise<Transport & { verifications: readonly PeerVerification[] }> {
  const { trust, say } = options;
  const transport = await secure.secureTransport(inner, {
    identity: options.identity,
    sessionId: options.room,
    trust: trust.mode,
    peers: options.pinned,
    handshakeTimeoutMs: options.timeoutMs,
    signal: options.signal,
    confirm: (peers, { signal }) => askToContinue(say, inner.party, peers, signal),
  });
  for (const peer of transport.verifications) {
    const whose = inner.parties === 2 ? 'peer key' : `party ${peer.party} key`;
    if (trust.mode === 'tofu') say(`${whose} ${peer.fingerprint} (not authenticated), short authentication string ${peer.sas}`);
    else say(`${whose} ${peer.fingerprint} authenticated (${peer.pinned ? 'pinned' : 'confirmed'})`);
  }
  return transport;
}

/**
 * The `'confirm'` question: shows each peer's key and short authentication string (those whose
 * key was not pinned) on stderr and reads y/N from stdin, once for all of them. Anything but
 * y/yes (including the end of stdin) is no.
 */
function askToContinue(
  say: (line: string) => void,
  party: number,
  peers: readonly PeerVerification[],
  signal: AbortSignal,
): Promise<boolean> {
  const shown = peers.filter((p) => !p.pinned);
  for (const peer of shown) {
    say(`party ${peer.party} presents key ${peer.fingerprint}`);
    say(`short authentication string: ${peer.sas}`);
  }
  if (shown.length === 1) {
    say('compare it with the other party (by voice, in person): both must see the same string.');
    process.stderr.write(`webmpc party ${party}: same string on both sides? continue [y/N] `);
  } else {
    say('compare each with that party (by voice, in person): each pair must see the same string.');
    process.stderr.write(`webmpc party ${party}: same strings on every side? continue [y/N] `);
  }
  return new Promise<boolean>((resolve) => {
    const lines = createInterface({ input: process.stdin, terminal: false });
    let answered = false;
    const answer = (ok: boolean, moot = false) => {
      if (answered) return;
      answered = true;
      signal.removeEventListener('abort', onMoot);
      lines.close();
      // readline resumed stdin; pause and unref it so it does not keep the process alive
      // (pausing alone does not, once data has flowed).
      process.stdin.pause();
      (process.stdin as { unref?: () => void }).unref?.();
      // A terminal echoed the answer and its newline; piped input did not.
      if (!process.stdin.isTTY || moot) process.stderr.write('\n');
      if (!ok && !moot) say('not confirmed: stopping');
      resolve(ok);
    };
    // The other side refused or left meanwhile: stop asking (and stop reading stdin).
    const onMoot = () => answer(false, true);
    signal.addEventListener('abort', onMoot, { once: true });
    lines.once('line', (line) => answer(/^\s*y(es)?\s*$/i.test(line)));
    lines.once('close', () => answer(false));
  });
}
