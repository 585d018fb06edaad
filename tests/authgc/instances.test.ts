// authgc's parallel instances through the SDK (sessions with threads = 2): a party whose instance
// makes its material under another global key Δ than its primary's is caught at the hand-over,
// before any of that material is used. The cheat is played on this thread, where the instance's
// task passes between the primary's engine worker and the instance's (`EngineWorker.perform`,
// wrapped here for party 1 only): the key handed to the instance is changed, and
//   - without more, party 1's own primary refuses the material by its key fingerprint
//     (INVALID_ARGUMENT, nothing sent), what honest code with such a bug would do;
//   - with the material's fingerprint forged to its primary's key (what a corrupt party's code
//     can do), the material passes that local check and the instance global-key check across the
//     parties catches it: the preprocessing fails at every party, none of it is used.
// The shipped Wasm has no deviation hooks, so party 1 still runs its own side of that check
// honestly and is the first to see it fail; that a corrupt party which skips its own side is
// named by every honest party is shown in Rust (wasm/crates/authgc/tests/instances.rs), with the
// crate's test-only deviation.
import { createHash } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryTransports, init, ProtocolAbort, session, WebmpcError, type Session } from '../../dist/index.js';
import { EngineWorker } from '../../dist/engine/worker-host.js';
import { rejection } from '../session/helpers.js';

beforeAll(async () => {
  await init();
});

type Perform = EngineWorker['perform'];
const honestPerform: Perform = EngineWorker.prototype.perform;
afterEach(() => {
  EngineWorker.prototype.perform = honestPerform;
});

/** The material header's key fingerprint (`delta_fingerprint` in the crate's online/material.rs). */
const FINGERPRINT = { at: 8 + 4 + 4 + 4, label: 'webmpc/authgc/material/delta-fingerprint/v1' };

/**
 * Makes party `cheater`'s authgc instances run under another key: flips a bit of the Δ each
 * instance task is handed (not the lowest: every Δ has it set), and, with `forge`, writes the
 * fingerprint of the primary's Δ into the material the instance hands back. Returns how many
 * instance tasks were changed.
 */
function cheatOnInstanceKey(cheater: number, forge: boolean): { changed: number } {
  const seen = { changed: 0 };
  EngineWorker.prototype.perform = async function (this: EngineWorker, op, hooks, modules) {
    const o = op as { op: string; protocol: string; ctx: { party: number }; args: { delta: Uint8Array } | null };
    if (o.op !== 'instance' || o.protocol !== 'authgc' || o.ctx.party !== cheater || o.args === null) {
      return honestPerform.call(this, op, hooks, modules);
    }
    const primaryKey = o.args.delta.slice();
    const other = o.args.delta.slice();
    other[7]! ^= 0x40;
    seen.changed++;
    const made = (await honestPerform.call(this, { ...o, args: { ...o.args, delta: other } } as typeof op, hooks, modules)) as { bytes: Uint8Array } | null;
    if (forge && made) {
      const digest = createHash('sha256').update(FINGERPRINT.label).update(primaryKey).digest();
      made.bytes.set(digest.subarray(0, 16), FINGERPRINT.at);
    }
    return made;
  };
  return seen;
}

async function pairWithThreads(threads: number): Promise<{ s: Session[]; close(): Promise<void> }> {
  const ts = createMemoryTransports(2, { recvTimeoutMs: 20_000 });
  const s = await Promise.all(ts.map((transport, party) => session({ transport, party, parties: 2, threads })));
  return { s, close: async () => void (await Promise.all(s.map((x) => x.close().catch(() => {})))) };
}

/** Big enough that authgc shares it out over two parts (see authgcInstanceParts). */
const SPLIT = { andGates: 12_000, masks: 12_000 };

describe('authgc parallel instances: an instance under another global key', () => {
  it('honest code with the wrong key: the primary refuses the material by its fingerprint, before anything is sent', async () => {
    const n = await pairWithThreads(2);
    try {
      const cheat = cheatOnInstanceKey(1, false);
      const [r0, r1] = await Promise.all(n.s.map((s) => rejection(s.preprocess('authgc', SPLIT))));
      expect(cheat.changed).toBe(1);
      expect(r1!.error).toBeInstanceOf(WebmpcError);
      expect(r1!.error.code).toBe('INVALID_ARGUMENT');
      expect(r1!.error.message).toMatch(/instance material refused/);
      // Party 0 learns of it only as party 1's failure: its transport closed with the error.
      expect(r0!.error).toBeInstanceOf(WebmpcError);
      expect(r0!.error.code, r0!.error.message).toMatch(/^(PEER_DISCONNECTED|ABORTED)$/);
      expect(r0!.error.message).toMatch(/instance material refused/);
    } finally {
      await n.close();
    }
  }, 60_000);

  it('a forged fingerprint: the instance global-key check across the parties catches it; the preprocessing fails at both parties', async () => {
    const n = await pairWithThreads(2);
    try {
      const cheat = cheatOnInstanceKey(1, true);
      const [r0, r1] = await Promise.all(n.s.map((s) => rejection(s.preprocess('authgc', SPLIT))));
      expect(cheat.changed).toBe(1);
      // The check, run by party 1's own (honest) code: party 0's opened tags fail against the
      // keys party 1's instance made under the other key.
      expect(r1!.error).toBeInstanceOf(ProtocolAbort);
      expect(r1!.error).toMatchObject({ code: 'CHEATING_DETECTED', phase: 'function-independent preprocessing' });
      expect(r1!.error.check).toMatch(/^instance (key check|global-key consistency check)/);
      // Party 0 never completes the hand-over either: party 1's abort reaches it first.
      expect(r0!.error).toBeInstanceOf(WebmpcError);
      expect(r0!.error.code, r0!.error.message).toMatch(/^(CHEATING_DETECTED|PEER_DISCONNECTED|ABORTED)$/);
    } finally {
      await n.close();
    }
  }, 60_000);

  it('the same sessions without the cheat: the hand-over passes (the changes above are what fail it)', async () => {
    const n = await pairWithThreads(2);
    try {
      await Promise.all(n.s.map((s) => s.preprocess('authgc', SPLIT)));
    } finally {
      await n.close();
    }
  }, 60_000);
});
