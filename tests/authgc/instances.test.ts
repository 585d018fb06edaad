// authgc's parallel instances through the SDK (sessions with threads = 2): a party whose instance
// makes its material under another global key Δ than its primary's is caught at the hand-over,
// before any of that material is used. The cheat is played on this thread, where the instance's
// task passes between the primary's engine worker and the instance's (changeInstanceKey in
// ../session/helpers.ts, for party 1 only): the key handed to the instance is changed, and
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
import { beforeAll, describe, expect, it } from 'vitest';
import { init, ProtocolAbort, WebmpcError } from '../../dist/index.js';
import { changeInstanceKey, rejection, restoreInstanceKeysAfterEach, withThreads } from '../session/helpers.js';

beforeAll(async () => {
  await init();
});

restoreInstanceKeysAfterEach();

/** The material header's key fingerprint (`delta_fingerprint` in the crate's online/material.rs). */
const FINGERPRINT = { at: 8 + 4 + 4 + 4, label: 'webmpc/authgc/material/delta-fingerprint/v1' };

/** Party 1's authgc instances under another key; with `forge`, their material claims the primary's. */
function cheatOnInstanceKey(forge: boolean): ReturnType<typeof changeInstanceKey> {
  return changeInstanceKey('authgc', 1, (made, primaryKey) => {
    if (!forge || !made) return;
    const digest = createHash('sha256').update(FINGERPRINT.label).update(primaryKey).digest();
    (made as { bytes: Uint8Array }).bytes.set(digest.subarray(0, 16), FINGERPRINT.at);
  });
}

/** Big enough that authgc shares it out over two parts (see authgcInstanceParts). */
const SPLIT = { andGates: 12_000, masks: 12_000 };

describe('authgc parallel instances: an instance under another global key', () => {
  it('honest code with the wrong key: the primary refuses the material by its fingerprint, before anything is sent', async () => {
    const n = await withThreads(2, 2);
    try {
      const played = cheatOnInstanceKey(false);
      const [r0, r1] = await Promise.all(n.s.map((s) => rejection(s.preprocess('authgc', SPLIT))));
      expect(played.changed).toBe(1);
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
    const n = await withThreads(2, 2);
    try {
      const played = cheatOnInstanceKey(true);
      const [r0, r1] = await Promise.all(n.s.map((s) => rejection(s.preprocess('authgc', SPLIT))));
      expect(played.changed).toBe(1);
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
    const n = await withThreads(2, 2);
    try {
      await Promise.all(n.s.map((s) => s.preprocess('authgc', SPLIT)));
    } finally {
      await n.close();
    }
  }, 60_000);
});
