// MASCOT's parallel instances through the SDK (sessions with threads = 2): a party whose instance
// makes its triples and bits under another MAC key share than its primary's (played on this
// thread by changeInstanceKey, ../session/helpers.ts) passes every check inside the instance —
// they all run under the instance's one key — and its material joins the store; MASCOT has no
// check at the hand-over, so what catches it is the MAC check of the values opened with those
// triples: the honest party aborts with MAC_CHECK_FAILED before any output is revealed.
import { beforeAll, describe, expect, it } from 'vitest';
import { init, ProtocolAbort } from '../../dist/index.js';
import { ProgramBuilder } from '../../dist/program/index.js';
import { changeInstanceKey, rejection, restoreInstanceKeysAfterEach, withThreads } from '../session/helpers.js';

beforeAll(async () => {
  await init();
});

restoreInstanceKeysAfterEach();

/** x·y + x·x·y over F_p, for 2 parties: a few multiplications, so the run uses triples. */
async function products() {
  const b = new ProgramBuilder({ parties: 2 });
  const x = b.element(0);
  const y = b.element(1);
  b.output(x.mul(y).add(x.mul(x).mul(y)));
  return b.build();
}

describe('MASCOT parallel instances: an instance under another MAC key share', () => {
  it("party 1's instance under another key: the honest party's MAC check of the run fails, MAC_CHECK_FAILED, no output", async () => {
    const program = await products();
    const n = await withThreads(2, 2);
    try {
      const cheat = changeInstanceKey('mascot', 1);
      // The run makes the triples it needs, half of them in each party's instance.
      const runs = n.s.map((s, p) => s.run(program, { protocol: 'mascot', inputs: program.encodeInputs(p, [BigInt(p + 5)]) }));
      const results = await Promise.all(runs.map(rejection));
      expect(cheat.changed).toBe(1);
      const [victim, cheater] = results.map((r) => r.error);
      expect(victim).toBeInstanceOf(ProtocolAbort);
      expect(victim.code, victim.message).toBe('MAC_CHECK_FAILED');
      expect(['MAC_CHECK_FAILED', 'PEER_DISCONNECTED']).toContain(cheater.code);
    } finally {
      await n.close();
    }
  }, 60_000);

  it('the same sessions without the cheat: the run gives the product', async () => {
    const program = await products();
    const n = await withThreads(2, 2);
    try {
      const outs = await Promise.all(n.s.map((s, p) => s.run(program, { protocol: 'mascot', inputs: program.encodeInputs(p, [BigInt(p + 5)]) })));
      // x = 5, y = 6: 30 + 150.
      for (const o of outs) expect(program.decodeOutputs(o)).toEqual([180n]);
    } finally {
      await n.close();
    }
  }, 60_000);
});
