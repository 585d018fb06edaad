// MASCOT through the SDK when things go wrong. A party that disconnects (crashes: its transport
// closes) or goes silent (a black hole: nothing in or out) during preprocessing or during the
// online phase: every other party gets a typed abort within a stated bound. A cheating peer,
// played by a transport wrapper that tampers with one stream of the Rust protocol's messages
// (each message ends with its stream tag, see spdz/src/mux.rs), is caught by the check meant for
// it and surfaces as a typed ProtocolAbort whose message carries no secret. Cancelling through an
// AbortSignal, and parties that disagree on the program or the preprocessing.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createMemoryTransports,
  init,
  ProtocolAbort,
  session,
  TransportError,
  WebmpcError,
  type Progress,
  type Session,
  type Transport,
} from '../../dist/index.js';
import { ProgramBuilder, vickreyAuction, type Program } from '../../dist/program/index.js';
import { rejection } from '../session/helpers.js';

beforeAll(async () => {
  await init();
});

/** The Rust protocol's streams (the last byte of each message). */
const STREAM = { CONTROL: 0, GILBOA: 3, COPE: 4 } as const;

/** A transport that passes everything through until told to tamper with, or stop, its traffic. */
class Wrapped implements Transport {
  /** Rewrites an outgoing message, or returns it as is. */
  tamper: ((to: number, data: Uint8Array) => Uint8Array) | undefined;
  #silent = false;
  readonly #hung: ((e: Error) => void)[] = [];

  constructor(readonly inner: Transport) {}

  get party() {
    return this.inner.party;
  }
  get parties() {
    return this.inner.parties;
  }
  get closed() {
    return this.inner.closed;
  }

  /** From now on nothing goes out and nothing comes in, as from a machine that lost its network. */
  goSilent(): void {
    this.#silent = true;
  }

  #hang<T>(): Promise<T> {
    return new Promise<T>((_, reject) => this.#hung.push(reject));
  }

  send(to: number, data: Uint8Array): Promise<void> {
    if (this.#silent) return this.#hang();
    return this.inner.send(to, this.tamper ? this.tamper(to, data) : data);
  }

  recv(from: number, options?: Parameters<Transport['recv']>[1]): Promise<Uint8Array> {
    if (this.#silent) return this.#hang();
    return this.inner.recv(from, options).then((m) => (this.#silent ? this.#hang() : m));
  }

  close(reason?: Error): Promise<void> {
    for (const reject of this.#hung.splice(0)) reject(new TransportError('CLOSED', 'test wrapper closed'));
    return this.inner.close(reason);
  }
}

interface Net {
  wrapped: Wrapped[];
  sessions: Session[];
  close(): Promise<void>;
}

let open: Net[] = [];

async function net(parties: number, recvTimeoutMs: number): Promise<Net> {
  const inner = createMemoryTransports(parties, { recvTimeoutMs });
  const wrapped = inner.map((t) => new Wrapped(t));
  const sessions = await Promise.all(wrapped.map((transport, party) => session({ transport, party, parties })));
  const n = { wrapped, sessions, close: async () => void (await Promise.all(wrapped.map((w) => w.close().catch(() => {})))) };
  open.push(n);
  return n;
}

afterEach(async () => {
  await Promise.all(open.map((n) => n.close()));
  open = [];
});

/** Flips the low bit of every 16-byte field element of a message (its stream tag kept). */
function flipElements(data: Uint8Array): Uint8Array {
  const out = data.slice();
  for (let i = 0; i + 16 < out.length; i += 16) out[i]! ^= 1;
  return out;
}

/** A small program with two layers of multiplications and a comparison; 3 parties or 2. */
async function smallProgram(parties: number): Promise<Program> {
  const b = new ProgramBuilder({ parties });
  const xs = Array.from({ length: parties }, (_, p) => b.uint(p, 32));
  const prod = xs.reduce((acc, x) => acc.mul(x.add(1)));
  b.output(prod.add(xs[0]!).mul(xs[1]!));
  b.output(xs[0]!.lt(xs[1]!));
  return b.build();
}

const SECRETS = [0xdeadbeefn, 0xc0ffeen, 0xfacaden];

/** No input value, in decimal or hex, in the error's message, stack or its causes'. */
function expectNoSecret(error: unknown): void {
  let e: unknown = error;
  for (let depth = 0; e && depth < 5; depth++) {
    const text = `${(e as Error).message}\n${(e as Error).stack}`.toLowerCase();
    for (const s of SECRETS) {
      expect(text).not.toContain(s.toString(10));
      expect(text).not.toContain(s.toString(16));
    }
    e = (e as { cause?: unknown }).cause;
  }
}

const inputsOf = (program: Program, party: number) => program.encodeInputs(party, program.inputsOf(party).map((_, k) => SECRETS[(party + k) % 3]!));

describe('a party that disconnects: every other party gets a typed abort within the bound', () => {
  // The vanishing party is party 2 of 3. Recv deadline 1.5 s for the silent case (its peers can
  // only time out), 30 s for the crash (its closed transport must be noticed well before that).
  for (const phase of ['preprocessing', 'online'] as const) {
    for (const how of ['crash', 'silent'] as const) {
      const timeout = how === 'silent' ? 1500 : 30_000;
      // Slack for the computation the others finish before they next wait for party 2.
      const bound = how === 'silent' ? timeout + 3000 : 3000;
      it(`${how} during ${phase}: parties 0 and 1 abort (TransportError) within ${bound} ms`, async () => {
        const n = await net(3, timeout);
        const program = await smallProgram(3);
        let vanished = 0;
        const vanish = () => {
          if (vanished) return;
          vanished = Date.now();
          if (how === 'crash') void n.wrapped[2]!.inner.close();
          else n.wrapped[2]!.goSilent();
        };
        const trigger = (p: Progress) => {
          if (phase === 'preprocessing' ? p.phase === 'triples' && p.done < p.total : p.phase === 'evaluating') vanish();
        };
        let runs: Promise<unknown>[];
        if (phase === 'preprocessing') {
          runs = n.sessions.map((s, p) => s.preprocess('mascot', { triples: 320, batch: 64, ...(p === 2 ? { onProgress: trigger } : {}) }));
        } else {
          await Promise.all(n.sessions.map((s) => s.preprocess('mascot', { program })));
          runs = n.sessions.map((s, p) => s.run(program, { protocol: 'mascot', inputs: inputsOf(program, p), ...(p === 2 ? { onProgress: trigger } : {}) }));
        }
        // Party 2's own call may end first (its transport is gone): keep its rejection for the end.
        const own = rejection(runs[2]!);
        const [r0, r1] = await Promise.all(runs.slice(0, 2).map(rejection));
        expect(vanished).toBeGreaterThan(0);
        for (const r of [r0!, r1!]) {
          expect(r.error).toBeInstanceOf(TransportError);
          expect(['PEER_DISCONNECTED', 'TIMEOUT']).toContain(r.error.code);
          expect(r.at - vanished).toBeLessThan(bound);
          expectNoSecret(r.error);
        }
        const codes = [r0!.error.code, r1!.error.code];
        // A crash is seen as a disconnect, never as a timeout; silence only as a timeout first.
        if (how === 'crash') expect(codes).toEqual(['PEER_DISCONNECTED', 'PEER_DISCONNECTED']);
        else expect(codes).toContain('TIMEOUT');
        // Party 2's own call ends too once the others are gone (its wrapper is closed by afterEach).
        await n.wrapped[2]!.close();
        await own;
      }, 60_000);
    }
  }
});

describe('a cheating peer (a tampering transport) is caught by the check meant for it', () => {
  /** Party 1 tampers with its first message on `stream` to party 0 once `armed()` says so. */
  async function cheat(stream: number, phase: 'preprocessing' | 'online') {
    const n = await net(2, 30_000);
    const program = await smallProgram(2);
    let armed = phase === 'preprocessing';
    let done = false;
    n.wrapped[1]!.tamper = (to, data) => {
      if (!armed || done || to !== 0 || data[data.length - 1] !== stream) return data;
      done = true;
      return flipElements(data);
    };
    let runs: Promise<unknown>[];
    if (phase === 'preprocessing') {
      // Setup first, untouched: COPE's and Gilboa's streams carry data only in preprocessing.
      armed = false;
      await Promise.all(n.sessions.map((s) => s.preprocess('mascot', { triples: 1 })));
      armed = true;
      runs = n.sessions.map((s) => s.preprocess('mascot', { triples: 100 }));
    } else {
      await Promise.all(n.sessions.map((s) => s.preprocess('mascot', { program })));
      runs = n.sessions.map((s, p) =>
        s.run(program, {
          protocol: 'mascot',
          inputs: inputsOf(program, p),
          ...(p === 1 ? { onProgress: (e: Progress) => void (armed ||= e.phase === 'evaluating') } : {}),
        }),
      );
    }
    const results = await Promise.all(runs.map(rejection));
    expect(done).toBe(true);
    for (const r of results) {
      expect(r.error).toBeInstanceOf(WebmpcError);
      expectNoSecret(r.error);
    }
    // Every party's transport ends up closed, so nobody waits for a timeout.
    for (const w of n.wrapped) expect(await w.inner.closed).toBeInstanceOf(Error);
    return results.map((r) => r.error as WebmpcError);
  }

  it('inconsistent COPE vectors (x differs per row): the input check of authentication, MAC_CHECK_FAILED', async () => {
    const [victim, cheater] = await cheat(STREAM.COPE, 'preprocessing');
    expect(victim).toBeInstanceOf(ProtocolAbort);
    expect(victim!.code).toBe('MAC_CHECK_FAILED');
    expect(['MAC_CHECK_FAILED', 'PEER_DISCONNECTED']).toContain(cheater!.code);
  }, 60_000);

  it('wrong Gilboa corrections d (wrong products): the sacrifice, SACRIFICE_FAILED', async () => {
    const [victim, cheater] = await cheat(STREAM.GILBOA, 'preprocessing');
    expect(victim).toBeInstanceOf(ProtocolAbort);
    expect(victim!.code).toBe('SACRIFICE_FAILED');
    expect(['SACRIFICE_FAILED', 'PEER_DISCONNECTED']).toContain(cheater!.code);
  }, 60_000);

  it('a share changed in an online opening (Beaver ε, δ): the transcript comparison names the peer, CHEATING_DETECTED', async () => {
    const [victim, cheater] = await cheat(STREAM.CONTROL, 'online');
    expect(victim).toBeInstanceOf(ProtocolAbort);
    expect(victim).toMatchObject({ code: 'CHEATING_DETECTED', peer: 1 });
    expect(['CHEATING_DETECTED', 'PEER_DISCONNECTED']).toContain(cheater!.code);
  }, 60_000);
});

describe('cancelling and disagreeing', () => {
  it('an AbortSignal during preprocessing: ABORTED here, PEER_DISCONNECTED at the peer (the abort, not its 30 s deadline)', async () => {
    const n = await net(2, 30_000);
    const controller = new AbortController();
    let at = 0;
    const runs = n.sessions.map((s, p) =>
      s.preprocess('mascot', {
        triples: 400,
        batch: 64,
        ...(p === 0
          ? {
              signal: controller.signal,
              onProgress: (e: Progress) => {
                if (e.phase === 'triples' && !at) {
                  at = Date.now();
                  controller.abort();
                }
              },
            }
          : {}),
      }),
    );
    const [mine, peer] = await Promise.all(runs.map(rejection));
    expect(mine!.error).toBeInstanceOf(TransportError);
    expect(mine!.error.code).toBe('ABORTED');
    expect(peer!.error).toMatchObject({ code: 'PEER_DISCONNECTED', peer: 0 });
  }, 60_000);

  it('different programs or different preprocessing: PARAMETER_MISMATCH at both, and the session goes on', async () => {
    const n = await net(2, 30_000);
    const [a, b] = n.sessions as [Session, Session];
    const p2 = await vickreyAuction({ parties: 2, bids: 2, bits: 8 });
    const p3 = await vickreyAuction({ parties: 2, bids: 3, bits: 8 });
    const programs = await Promise.all([
      rejection(a.run(p2, { protocol: 'mascot', inputs: p2.encodeInputs(0, [1]) })),
      rejection(b.run(p3, { protocol: 'mascot', inputs: p3.encodeInputs(1, [2]) })),
    ]);
    for (const r of programs) expect(r.error).toMatchObject({ code: 'PARAMETER_MISMATCH', message: expect.stringMatching(/hash/) });
    const counts = await Promise.all([rejection(a.preprocess('mascot', { triples: 10 })), rejection(b.preprocess('mascot', { triples: 11 }))]);
    for (const r of counts) expect(r.error).toMatchObject({ code: 'PARAMETER_MISMATCH', message: expect.stringMatching(/params/) });
    const out = await Promise.all([
      a.run(p2, { protocol: 'mascot', inputs: p2.encodeInputs(0, [1]) }),
      b.run(p2, { protocol: 'mascot', inputs: p2.encodeInputs(1, [2]) }),
    ]);
    for (const o of out) expect(p2.decodeOutputs(o)).toEqual([1n, 1n]);
  }, 60_000);

  it('preprocess refuses bad options before anything is sent', async () => {
    const program = await vickreyAuction({ parties: 2, bids: 2, bits: 8 });
    for (const [options, text] of [
      [{ triples: -1 }, /triples must be an integer/],
      [{ bits: 1.5 }, /bits must be an integer/],
      [{ triples: 1e8 }, /triples must be an integer in \[0, 10000000\]/],
      [{ batch: 0 }, /batch must be an integer in \[1, 4096\]/],
      [{ program, triples: 3 }, /either a program or counts/],
      [{ program, field: 'binary' }, /over the prime field/],
      [{ field: 'complex' }, /field must be 'prime' or 'binary'/],
      [{ program: { kind: 'program' } }, /must come from webmpc\/program/],
      [{ garbler: 0 }, /option 'garbler' does not apply to preprocess with protocol 'mascot'/],
    ] as [object, RegExp][]) {
      const n = await net(2, 30_000);
      const before = n.sessions[0]!.bytesSent;
      await expect(n.sessions[0]!.preprocess('mascot', options as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringMatching(text) });
      expect(n.sessions[0]!.bytesSent).toBe(before);
    }
  });
});
