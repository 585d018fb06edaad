// The sealed-bid auction demo: the Vickrey circuit against the plaintext rule (random bids and
// ties), the auction core over in-memory transports on every engine (authgc's circuit, mascot's
// program; a cheating bidder caught), `npm run demo` (minus setup and the SDK build) with
// scripted Node bidders over WebRTC, and the stand-alone Node bidder CLI.
import { execFile, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createMemoryTransports, init, prepareCircuit, type Transport } from '../../dist/index.js';
import { vickreyReference as sdkVickreyReference } from '../../dist/program/index.js';
import { startSignalingServer } from '../../dist/net/node.js';
import {
  BID_BITS,
  DEFAULT_ENGINE,
  ENGINES,
  MAX_BID,
  PhaseClock,
  decodeOutcome,
  decodeProgramOutcome,
  encodeBid,
  isOffered,
  mascotBatch,
  parseBid,
  placeBid,
  vickreyCircuit,
  vickreyProgram,
  vickreyReference,
  type EngineName,
} from '../../demo-app/src/auction.js';
import { explain, linkUrl, parseLink } from '../../demo-app/src/room.js';
import { ROOT } from '../helpers.js';

const DEMO = join(ROOT, 'scripts/demo.mjs');
const BIDDER = join(ROOT, 'demo-app/dist/node/bidder.mjs');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function node(args: string[], timeoutMs = 90_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { timeout: timeoutMs, encoding: 'utf8', cwd: ROOT }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

/**
 * What a run said, for a failed expectation: a hang or a failure is explained by both streams.
 * The first line names the demo's own last word on stderr (its failure, or the deadline it
 * missed), as a failure summary that keeps one line per test still says why.
 */
const said = (r: Run) => {
  const last = r.stderr.split('\n').filter((l) => l.startsWith('demo: ')).at(-1);
  return `exit ${r.code}${last ? ` (${last.slice(0, 240)})` : ''}\n--- stderr\n${r.stderr}\n--- stdout\n${r.stdout}`;
};

/**
 * `npm run demo` as the tests run it: no setup or SDK build, no serving, and a whole-auction
 * deadline (75 s) below this file's 90 s kill, so a stuck run ends with the demo's own message
 * naming the phase and the bidder, not a bare timeout.
 */
const demo = (args: string[]) => node([DEMO, '--skip-build', '--no-serve', '--timeout', '75', ...args]);

/** The lines one bidder printed (the launcher prefixes them with `[bidder i]`). */
const linesOf = (stdout: string, bidder: number) =>
  stdout
    .split('\n')
    .filter((l) => l.startsWith(`[bidder ${bidder}] `))
    .join('\n');

/** Random bids with a good chance of ties at the top and of the extremes. */
function randomBids(n: number): number[] {
  const pool = [0, MAX_BID, randomInt(0, 2 ** 32), randomInt(0, 2 ** 32)];
  return Array.from({ length: n }, () => (randomInt(0, 3) === 0 ? pool[randomInt(0, pool.length)]! : randomInt(0, 2 ** 32)));
}

describe('the Vickrey circuit', () => {
  beforeAll(() => init());

  it('matches the plaintext rule for 2 to 6 bidders, random bids and ties', () => {
    const cases: number[][] = [
      [5, 5, 5],
      [0, 0, 0, 0],
      [MAX_BID, 1, MAX_BID],
      [1, 2, 3, 3, 2, 1],
      [9, 8],
      [8, 9],
      [7, 7, 9, 9, 9],
    ];
    for (let n = 2; n <= 6; n++) for (let k = 0; k < 8; k++) cases.push(randomBids(n));
    const circuits = new Map<number, ReturnType<typeof prepareCircuit>>();
    try {
      for (const bids of cases) {
        let prepared = circuits.get(bids.length);
        if (!prepared) circuits.set(bids.length, (prepared = prepareCircuit(vickreyCircuit(bids.length))));
        const got = decodeOutcome(prepared.evaluate(bids.map(encodeBid)), bids.length);
        expect(got, `bids ${bids.join(', ')}`).toEqual(vickreyReference(bids));
      }
    } finally {
      for (const c of circuits.values()) c.free();
    }
  });

  it('ties go to the lowest index and the price is the tied bid; the price is the highest other bid', () => {
    expect(vickreyReference([3, 9, 9, 1])).toEqual({ winner: 1, price: 9 });
    expect(vickreyReference([9, 3, 9])).toEqual({ winner: 0, price: 9 });
    expect(vickreyReference([1, 2, 10, 4])).toEqual({ winner: 2, price: 4 });
  });

  it("the app's rule is the SDK Vickrey program's rule (mascot runs that program): same winner on ties, same price", () => {
    const cases: number[][] = [[5, 5, 5], [0, 0], [MAX_BID, 1, MAX_BID], [1, 9, 3, 9, 9], [7, 7, 9, 9, 9], [9, 8], [8, 9]];
    for (let n = 2; n <= 16; n++) for (let k = 0; k < 20; k++) cases.push(randomBids(n));
    for (const bids of cases) {
      const sdk = sdkVickreyReference(bids.map(BigInt));
      expect({ winner: sdk.winner, price: Number(sdk.price) }, `bids ${bids.join(', ')}`).toEqual(vickreyReference(bids));
    }
  });

  it('the mascot program: one range-checked 32-bit input per bidder, two outputs to all; its outputs are read back strictly', async () => {
    const program = await vickreyProgram(4);
    expect(program.owners).toEqual([0, 1, 2, 3]);
    expect(program.inputKinds).toEqual([0, 1, 2, 3].map(() => ({ type: 'unsigned', bits: BID_BITS })));
    expect(program.outputs).toEqual([[0, 1, 2, 3], [0, 1, 2, 3]]);
    expect(program.parties).toBe(4);
    expect(Array.from(program.encodeInputs(2, [0x01020304])[0]!)).toEqual([1, 2, 3, 4]);
    expect(decodeProgramOutcome([3n, BigInt(MAX_BID)], 4)).toEqual({ winner: 3, price: MAX_BID });
    expect(() => decodeProgramOutcome([4n, 1n], 4)).toThrow(/only 4/);
    expect(() => decodeProgramOutcome([0n, BigInt(MAX_BID) + 1n], 4)).toThrow(/not a bid/);
    expect(() => decodeProgramOutcome([0n], 4)).toThrow(/unexpected shape/);
    // Preprocessing in about 8 steps per phase, in whole multiples of 32 up to the SDK default.
    expect([1, 338, 644, 5000, 100_000].map(mascotBatch)).toEqual([32, 64, 96, 640, 1024]);
  });

  it('has one input per bidder (owned by it), two outputs, and about 5·32 AND gates per extra bidder', () => {
    const c = vickreyCircuit(5);
    expect(c.inputs.map((i) => [i.party, i.width])).toEqual([0, 1, 2, 3, 4].map((p) => [p, BID_BITS]));
    expect(c.outputWidths).toEqual([8, BID_BITS]);
    expect(c.andCount).toBeGreaterThan(4 * 4 * BID_BITS);
    expect(c.andCount).toBeLessThanOrEqual(4 * 5 * BID_BITS + 4 * 8);
  });

  it('bids are whole numbers from 0 to 2^32 − 1', () => {
    expect(parseBid(' 42 ')).toBe(42);
    expect(parseBid(String(MAX_BID))).toBe(MAX_BID);
    for (const bad of ['', '-1', '1.5', '4294967296', '1e3', '0x10', 'abc']) expect(parseBid(bad), bad).toBeUndefined();
    expect(() => encodeBid(-1)).toThrow(RangeError);
    expect(Array.from(encodeBid(0x01020304))).toEqual([1, 2, 3, 4]);
  });
});

describe('auction links', () => {
  it('round-trip, and a bad link says what is wrong', () => {
    const url = linkUrl('http://h:1/app/?x=1', { room: 'r-1', bidders: 4, engine: DEFAULT_ENGINE, signalingUrl: 'ws://h:2', seat: 3 });
    expect(parseLink(new URL(url).searchParams)).toEqual({ room: 'r-1', bidders: 4, engine: DEFAULT_ENGINE, signalingUrl: 'ws://h:2', seat: 3 });
    // Without `engine`, the default one.
    expect(parseLink(new URLSearchParams('room=a&n=3'))).toMatchObject({ engine: DEFAULT_ENGINE });
    expect(parseLink(new URLSearchParams(''))).toBeUndefined();
    const problem = (q: string) => (parseLink(new URLSearchParams(q)) as { problem: string }).problem;
    expect(problem('room=a b&n=3')).toMatch(/letters, digits/);
    expect(problem('room=a&n=1')).toMatch(/how many bidders/);
    expect(problem('room=a&n=3&engine=nope')).toMatch(/unknown engine "nope"/);
    expect(problem(`room=a&n=3&engine=${DEFAULT_ENGINE}&seat=3`)).toMatch(/seat must be 0 to 2/);
    expect(problem(`room=a&n=3&engine=${DEFAULT_ENGINE}&signal=http://x`)).toMatch(/ws:\/\//);
    // mascot is offered beside the default.
    expect(isOffered(ENGINES.mascot)).toBe(true);
    expect(DEFAULT_ENGINE).toBe('authgc');
    expect(parseLink(new URLSearchParams('room=a&n=3&engine=mascot'))).toMatchObject({ engine: 'mascot' });
    // Once a private engine is in the build, a link cannot ask for the one without privacy.
    if (DEFAULT_ENGINE !== 'plain') expect(problem('room=a&n=3&engine=plain')).toContain(`"plain" has no privacy and is not offered; use ${DEFAULT_ENGINE}`);
  });

  it('failures are explained with the phase and the bidder', () => {
    const e = explain(Object.assign(new Error('party 2 closed'), { code: 'PEER_DISCONNECTED', peer: 2 }), 'evaluating');
    expect(e.title).toBe('Bidder 2 left or lost its connection while evaluating the auction; the auction was aborted.');
    expect(e).toMatchObject({ code: 'PEER_DISCONNECTED', peer: 2, phase: 'evaluating' });
    const relayed = { code: 'PEER_DISCONNECTED', peer: 0, remote: { code: 'PEER_DISCONNECTED', message: 'connection to party 2 closed' } };
    expect(explain(Object.assign(new Error('party 0 aborted the session'), relayed), 'session').title).toBe(
      'Bidder 0 aborted the auction while agreeing on the session (it said: connection to bidder 2 closed).',
    );
    expect(explain(Object.assign(new Error('x'), { code: 'CHEATING_DETECTED', peer: 1 }), 'preprocessing').title).toMatch(
      /check failed while preprocessing: bidder 1 deviated/,
    );
    // A protocol's own phase and check (authgc's errors carry them) win over the app's phase.
    const cheat = explain(Object.assign(new Error('x'), { code: 'CHEATING_DETECTED', peer: 3, phase: 'online', check: 'row MAC' }), 'evaluating');
    expect(cheat.title).toBe('A check failed while evaluating the auction (row MAC): bidder 3 deviated from the protocol. The auction was aborted.');
    expect(cheat).toMatchObject({ phase: 'online', peer: 3 });
    // A failed check that cannot tell who deviated (authgc's tag check after an AND gate, where
    // another garbler's tags helped build the labels) names no bidder, and says so.
    const unproven = explain(
      Object.assign(new Error('online: the tag check on a decrypted garbled row failed, and the check cannot tell which party deviated: aborting'), {
        code: 'CHEATING_DETECTED',
        phase: 'online',
        check: 'tag check on a decrypted garbled row',
      }),
      'evaluating',
    );
    expect(unproven.title).toBe(
      'A check failed while evaluating the auction (tag check on a decrypted garbled row): a bidder deviated from the protocol (this check cannot tell which). The auction was aborted.',
    );
    expect(unproven.peer).toBeUndefined();
    // MASCOT's checks on shared values see that something changed, not who changed it.
    const mac = explain(Object.assign(new Error('MAC check failed in the input check: aborting'), { code: 'MAC_CHECK_FAILED' }), 'evaluating');
    expect(mac.title).toBe(
      'A check failed while evaluating the auction (MAC check): a bidder deviated from the protocol (this check cannot tell which). The auction was aborted.',
    );
    expect(mac.detail).toBe('MAC_CHECK_FAILED: MAC check failed in the input check: aborting');
    // A check named only in the message (MASCOT's) is named in the title too.
    expect(explain(Object.assign(new Error('party 1 failed the coin commitment opening: aborting'), { code: 'CHEATING_DETECTED', peer: 1 }), 'bits').title).toBe(
      'A check failed while preprocessing: random shared bits (for the comparisons) (coin commitment opening): bidder 1 deviated from the protocol. The auction was aborted.',
    );
    expect(explain(Object.assign(new Error('triple sacrifice failed: aborting'), { code: 'SACRIFICE_FAILED' }), 'triples').title).toBe(
      'A check failed while preprocessing: multiplication triples (sacrifice check of the triples): a bidder deviated from the protocol (this check cannot tell which). The auction was aborted.',
    );
  });
});

describe('the auction core over in-memory transports', () => {
  beforeAll(() => init());

  /** The phases each engine goes through after the app's own (connecting, securing). */
  const PHASES: Record<EngineName, string[]> = {
    plain: ['session', 'evaluating'],
    authgc: ['session', 'setup', 'function-independent preprocessing', 'function-dependent preprocessing', 'online'],
    // Setup (base OTs, COPE), the random bits, the triples, then the program: each its own step.
    mascot: ['session', 'setup', 'bits', 'triples', 'evaluating'],
  };
  /** Bidder counts, without and with a tie at the top (mascot: its 5 parties in one thread are slow). */
  const SIZES: Record<EngineName, [number, number]> = { plain: [3, 5], authgc: [3, 5], mascot: [3, 4] };

  for (const engine of Object.values(ENGINES).filter((e) => e.available)) {
    it(`${engine.name}: every bidder learns the same, right result, with its phases timed`, async () => {
      const [small, large] = SIZES[engine.name];
      for (const [n, tie] of [
        [small, false],
        [large, true],
      ] as const) {
        const bids = randomBids(n);
        // A tie at the top between bidder 1 and the last one (for mascot's tournament, bids on
        // either side of its final match): the lower index wins at the tied price.
        if (tie) bids[n - 1] = bids[1] = Math.max(...bids);
        const transports = createMemoryTransports(n);
        const results = await Promise.all(
          transports.map((transport, i) => {
            const clock = new PhaseClock();
            return placeBid({ transport, bid: bids[i]!, engine: engine.name, clock }).then((r) => ({ r, phases: clock.records }));
          }),
        );
        for (const { r, phases } of results) {
          expect(r, `bids ${bids.join(', ')}`).toMatchObject({ ...vickreyReference(bids), bidders: n, engine: engine.name });
          expect(phases.map((p) => p.phase)).toEqual(PHASES[engine.name]);
          expect(phases.every((p) => p.ms >= 0)).toBe(true);
          expect(r.bytesSent).toBeGreaterThan(0);
          // The phases' bytes add up to the session's (every phase after 'session' is counted).
          expect(phases.reduce((sum, p) => sum + (p.bytesSent ?? 0), 0)).toBe(r.bytesSent);
        }
      }
    }, 60_000);
  }

  it('mascot: a bidder who opens a changed value in the evaluation is caught and named; every bidder aborts, none gets a result', async () => {
    const transports = createMemoryTransports(3);
    // Bidder 2 runs the protocol but flips a bit in the second message it sends each other
    // bidder after the input masks (its first large message) once the program runs: a value it
    // broadcasts, changed the same way for both. The SDK's channel carries it faithfully.
    let phase = '';
    const sent = [0, 0];
    const masked = [false, false];
    let bent = 0;
    const honest = transports[2]!;
    const cheat: Transport = {
      party: honest.party,
      parties: honest.parties,
      closed: honest.closed,
      send(to, data) {
        if (to === 2 || phase !== 'evaluating') return honest.send(to, data);
        if (!masked[to]) {
          masked[to] = data.length >= 1024;
          return honest.send(to, data);
        }
        if (++sent[to]! !== 2) return honest.send(to, data);
        bent++;
        const copy = data.slice();
        copy[copy.length >> 1]! ^= 0x10;
        return honest.send(to, copy);
      },
      recv: (peer, options) => honest.recv(peer, options),
      close: (reason) => honest.close(reason),
    };
    const clocks = [0, 1, 2].map((i) => new PhaseClock(i === 2 ? (u) => (phase = u.phase) : undefined));
    const outcomes = await Promise.all(
      [transports[0]!, transports[1]!, cheat].map((transport, i) =>
        placeBid({ transport, bid: 100 + i, engine: 'mascot', clock: clocks[i]! }).then(
          (r) => r,
          (e: unknown) => e,
        ),
      ),
    );
    expect(bent).toBe(2);
    // The parties compare what they saw broadcast before any output: bidder 2's own view differs
    // from what it sent the others. Each honest bidder either catches it itself or first hears
    // the other honest bidder's abort carrying that verdict (fail-stop: which comes first is the
    // machine's timing); the first to notice can only have caught it itself.
    const caught = [0, 1].filter((i) => (outcomes[i] as { code?: string }).code === 'CHEATING_DETECTED');
    expect(caught.length, 'one honest bidder at least catches bidder 2 itself').toBeGreaterThan(0);
    for (const i of [0, 1]) {
      const err = outcomes[i] as { code: string; peer?: number; remote?: { code: string; message: string } };
      expect(clocks[i]!.phase).toBe('evaluating');
      if (!caught.includes(i)) {
        expect(err, `bidder ${i}`).toMatchObject({ code: 'PEER_DISCONNECTED', peer: 1 - i, remote: { code: 'CHEATING_DETECTED' } });
        continue;
      }
      expect(err, `bidder ${i}`).toMatchObject({ code: 'CHEATING_DETECTED', peer: 2 });
      expect(explain(err, clocks[i]!.phase!).title).toBe(
        "A check failed while evaluating the auction (broadcast consistency check): bidder 2's view of what was broadcast differs from this bidder's, so either bidder 2 deviated from the protocol or another bidder sent different bidders different values. The auction was aborted.",
      );
    }
    expect(outcomes[2]).toHaveProperty('code');
  });

  it('a bidder that leaves makes every other bidder fail promptly, naming it', async () => {
    const transports = createMemoryTransports(3);
    const clocks = transports.map(() => new PhaseClock());
    // Bidder 2 never bids: it closes its transport with an error instead.
    const runs = [0, 1].map((i) => placeBid({ transport: transports[i]!, bid: 1, engine: DEFAULT_ENGINE, clock: clocks[i]! }));
    // PEER_DISCONNECTED naming party 2 (not a deadline's TIMEOUT): the news travelled as a message.
    await transports[2]!.close(new Error('bidder 2 went away'));
    for (const run of runs) {
      const err = await run.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ code: 'PEER_DISCONNECTED', peer: 2 });
    }
  });
});

describe('npm run demo (scripted Node bidders over WebRTC)', () => {
  beforeAll(async () => {
    const built = await node([DEMO, '--skip-build', '--build-only']);
    expect(built.code, said(built)).toBe(0);
  }, 120_000);

  it('3 bidders: the right winner and price; each bidder prints only its own bid; the join link is printed', async () => {
    const bids = [123_456_789, 3_000_000_017, 987_654_321];
    const r = await demo([...bids.map(String)]);
    expect(r.code, said(r)).toBe(0);
    expect(r.stdout).toContain('result: bidder 1 wins and pays 987654321 (the second-highest bid; ties go to the lowest index)');
    expect(r.stdout).toMatch(/time: auction \d+ ms .*engine \w+, \d+ AND gates/);
    expect(r.stdout).toMatch(/Hold your own auction: open http:\/\/127\.0\.0\.1:\d+\/\?room=auction-[0-9a-f]{16}&n=3&engine=\w+ in 3 browsers/);
    const lines = [0, 1, 2].map((i) => linesOf(r.stdout, i));
    lines.forEach((l, i) => expect(l).toContain(`your bid: ${bids[i]}`));
    expect(lines[1]).toContain('result: you win; you pay 987654321');
    expect(lines[0]).toContain('result: bidder 1 wins and pays 987654321');
    // Every bidder pinned the others' keys (the launcher relayed them).
    for (const l of lines) expect(l.match(/\(pinned\)/g)).toHaveLength(2);
    // The losing bid that is not the price, and the winning bid, appear only in their owners' lines.
    const without = (i: number) => r.stdout.split('\n').filter((l) => !l.startsWith(`[bidder ${i}] `)).join('\n');
    expect(without(0)).not.toContain('123456789');
    expect(without(1)).not.toContain('3000000017');
  }, 120_000);

  it('ties go to the lowest index, who pays the tied bid', async () => {
    const r = await demo(['10', '4294967295', '4294967295']);
    expect(r.code, said(r)).toBe(0);
    expect(r.stdout).toContain('result: bidder 1 wins and pays 4294967295');
  }, 120_000);

  it('--engine mascot: 3 bidders with a tie at the top; the link carries the engine', async () => {
    const r = await demo(['--engine', 'mascot', '10', '4294967295', '4294967295']);
    expect(r.code, said(r)).toBe(0);
    expect(r.stdout).toContain('Sealed-bid second-price auction: 3 bidders (Node processes), engine mascot, 32-bit bids');
    expect(r.stdout).toContain('result: bidder 1 wins and pays 4294967295');
    expect(r.stdout).toMatch(/phases \(slowest bidder; bytes sent by all\): .*setup .*; preprocessing: random shared bits .*; preprocessing: multiplication triples .*; evaluating the auction /);
    expect(r.stdout).toMatch(/time: auction \d+ ms .*engine mascot, \d+ triples and \d+ random bits/);
    expect(r.stdout).toMatch(/Hold your own auction: open http:\/\/127\.0\.0\.1:\d+\/\?room=auction-[0-9a-f]{16}&n=3&engine=mascot in 3 browsers/);
    for (let i = 0; i < 3; i++) expect(linesOf(r.stdout, i)).toContain('result: ');
  }, 120_000);

  it('6 bidders, a three-way tie at the top', async () => {
    const r = await demo(['5', '80', '3', '80', '80', '7']);
    expect(r.code, said(r)).toBe(0);
    expect(r.stdout).toContain('Sealed-bid second-price auction: 6 bidders');
    expect(r.stdout).toContain('result: bidder 1 wins and pays 80');
    for (let i = 0; i < 6; i++) expect(linesOf(r.stdout, i).match(/\(pinned\)/g)).toHaveLength(5);
  }, 120_000);

  it('--serve keeps the app up for people: the page, its config and the link work until SIGINT', async () => {
    const child = spawn(process.execPath, [DEMO, '--skip-build', '--serve', '1', '2', '3'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      const deadline = Date.now() + 90_000;
      while (!stdout.includes('Serving until Ctrl-C') && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 100));
      expect(stdout).toContain('result: bidder 2 wins and pays 2');
      const invite = /open (http:\/\/\S+) in 3 browsers/.exec(stdout)?.[1];
      expect(invite).toBeDefined();
      const page = await fetch(invite!);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<main id="app"');
      const config = (await (await fetch(new URL('config.json', invite)).then((res) => res.json()))) as { signalingUrl: string };
      expect(config.signalingUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  }, 120_000);

  // Each point where a bidder could wait forever, stalled on purpose (the launcher's testing
  // option): the run ends by a deadline, with a message naming the phase and the bidder waited
  // for, long before this test's own timeout.
  it.each([
    ['starting', /deadline missed: bidder 2 did not start within 4 s/],
    ['connecting', /Timed out while connecting to the other bidders.*party 2 never joined room/s],
    ['securing', /Timed out while secure channels \(key exchange\), waiting for bidder 2/],
    ['exiting', /deadline missed: bidder 2 gave its result but did not exit within 10 s/],
  ])('a bidder stuck at %s: the deadline names the phase and the bidder', async (point, message) => {
    const t0 = performance.now();
    const r = await demo(['--phase-timeout', '4', '--stall', `2:${point}`, '1', '2', '3']);
    expect(r.code, said(r)).toBe(1);
    expect(r.stderr, said(r)).toMatch(message);
    expect(r.stdout).toContain(`[bidder 2] (test) stalling at ${point}`);
    expect(performance.now() - t0).toBeLessThan(45_000);
  }, 90_000);

  it('bad arguments exit 2 with the usage', async () => {
    for (const args of [['12', '4294967296'], ['--bidders', '3', '1', '2'], ['--engine', 'nope'], ['--stall', '5:starting'], ['--stall', '1:nowhere'], ['--phase-timeout', '0']]) {
      const r = await demo([...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/usage: npm run demo/);
    }
  }, 60_000);
});

describe('the Node bidder CLI', () => {
  beforeAll(async () => {
    const built = await node([DEMO, '--skip-build', '--build-only']);
    expect(built.code, said(built)).toBe(0);
  }, 120_000);

  it.each([DEFAULT_ENGINE, 'mascot'])('three stand-alone bidders (--engine %s) meet in a room (first free seats) and agree on the result', async (engine) => {
    const signaling = await startSignalingServer({ port: 0 });
    try {
      const bids = [40, 70, 55];
      const runs = await Promise.all(
        bids.map((bid) =>
          node([BIDDER, '--signal', signaling.url, '--room', 'cli-room', '--bidders', '3', '--engine', engine, '--bid', String(bid), '--json', '--wait', '60', '--yes']),
        ),
      );
      const outs = runs.map((r) => {
        expect(r.code, said(r)).toBe(0);
        return JSON.parse(r.stdout.trim()) as { ok: boolean; seat: number; winner: number; price: number; engine: string };
      });
      for (const o of outs) expect(o.engine).toBe(engine);
      expect(outs.map((o) => o.seat).sort()).toEqual([0, 1, 2]);
      const seatOf70 = outs[1]!.seat;
      for (const o of outs) expect(o).toMatchObject({ ok: true, winner: seatOf70, price: 55 });
      // Each bidder printed a code per other bidder (with its key), and each pair's two ends
      // printed the same code.
      const codes = new Map<string, string>();
      runs.forEach((r, i) => {
        const printed = [...r.stderr.matchAll(/code with bidder (\d): (\d{3} \d{3}) \(its key [0-9a-f]{4} [0-9a-f]{4}/g)];
        expect(printed).toHaveLength(2);
        for (const [, other, code] of printed) codes.set(`${outs[i]!.seat}-${other}`, code!);
      });
      for (const [pair, code] of codes) expect(codes.get(pair.split('-').reverse().join('-')), pair).toBe(code);
    } finally {
      await signaling.close();
    }
  }, 120_000);

  it('a bidder whose peers never arrive times out with the phase named; bad usage exits 2', async () => {
    const signaling = await startSignalingServer({ port: 0 });
    try {
      const r = await node([BIDDER, '--signal', signaling.url, '--room', 'alone', '--bidders', '3', '--engine', DEFAULT_ENGINE, '--bid', '1', '--wait', '2', '--yes']);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/Timed out while connecting to the other bidders\.\n {2}TIMEOUT: /);
    } finally {
      await signaling.close();
    }
    const bad = await node([BIDDER, '--room', 'x', '--bidders', '3', '--bid', '1', '--yes']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--signal ws:\/\/HOST:PORT/);
    // Without a terminal to ask, accepting the codes unseen must be said explicitly.
    const unasked = await node([BIDDER, '--signal', 'ws://127.0.0.1:1', '--room', 'x', '--bidders', '3', '--bid', '1']);
    expect(unasked.code).toBe(2);
    expect(unasked.stderr).toMatch(/say --yes to accept them/);
  }, 60_000);
});
