// Malicious-mode checks through the SDK, each with a cheating entity it catches: a malicious
// enclave (a WebSocket proxy editing its tables or decoding bits on their way to the evaluator;
// its sealed x2⁰ labels cannot be edited on the way at all),
// a malicious garbler (its x2¹ labels edited on the session transport) and a malicious evaluator
// (the garbler's output labels edited). Semi-honest mode has no such checks: the same tampering
// silently corrupts the output, which is why malicious mode exists.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryTransports, EnclaveAbort, init, session, type Transport } from '../../dist/index.js';
import { both, circuitFile, enclaveFor, hex, startServer, TAG, tamperingProxy, unhex } from './helpers.js';

const KEY = unhex('000102030405060708090a0b0c0d0e0f');
const PT = unhex('00112233445566778899aabbccddeeff');
const CT = '69c4e0d86a7b0430d8cdb78070b4c55a';

let server: Awaited<ReturnType<typeof startServer>>;

beforeAll(async () => {
  await init();
  server = await startServer();
});

afterAll(async () => {
  await server?.close();
});

/** `inner` with outgoing messages passed through `edit(to, message)`: a deviating party. */
function tampering(inner: Transport, edit: (to: number, m: Uint8Array) => void): Transport {
  return {
    party: inner.party,
    parties: inner.parties,
    closed: inner.closed,
    send: (to, data) => {
      const m = data.slice();
      edit(to, m);
      return inner.send(to, m);
    },
    recv: (from, o) => inner.recv(from, o),
    close: (reason) => inner.close(reason),
  };
}

/** AES-128 through teleport-yao, outputs to both, with the given transports and enclave URL. */
async function aes(mode: 'semi-honest' | 'malicious', url: string, wrap: (t: Transport) => Transport = (t) => t) {
  const transports = createMemoryTransports(2, { recvTimeoutMs: 20_000 }).map(wrap);
  const c = circuitFile('aes_128.txt');
  try {
    const sessions = await Promise.all(transports.map((t, p) => session({ transport: t, party: p, parties: 2 })));
    const enclave = enclaveFor({ url, measurement: server.measurement });
    const run = (p: number) => sessions[p]!.run(c, { inputs: [p === 0 ? KEY : PT], protocol: 'teleport-yao', mode, enclave });
    const r = await both(run(0), run(1));
    await Promise.all(sessions.map((s) => s.close().catch(() => {})));
    return r;
  } finally {
    c.free();
  }
}

const reason = (r: PromiseSettledResult<unknown>) => (r as PromiseRejectedResult).reason;
const value = (r: PromiseSettledResult<unknown>) => (r as PromiseFulfilledResult<(Uint8Array | undefined)[]>).value;

/** A proxy in front of the server editing the first enclave message with `tag` by `edit(payload)`. */
async function enclaveEditing(tag: number, edit: (frame: Buffer) => void) {
  let done = false;
  return tamperingProxy(server.url, (f) => {
    if (!done && f[0] === 1 && f[1] === tag) {
      done = true;
      edit(f);
    }
  });
}

describe('a malicious enclave', () => {
  it('a tampered table fails τ in malicious mode, and goes unnoticed in semi-honest mode', async () => {
    // One bit of every 16-byte row of the first tables message: whatever rows the select bits
    // pick, the evaluator meets a wrong one (GRR3's implicit row escapes 1 time in 4 per gate).
    const flipTables = (f: Buffer) => {
      for (let k = 2 + 8 + 5; k < f.length; k += 16) f[k]! ^= 0x10;
    };
    let proxy = await enclaveEditing(TAG.TABLES, flipTables);
    try {
      const [g, e] = await aes('malicious', proxy.url);
      expect(reason(e)).toBeInstanceOf(EnclaveAbort);
      expect(reason(e).code).toBe('ENCLAVE_CHECK_FAILED');
      expect(reason(e).check).toBe('gc-tau');
      expect(reason(e).suspect).toBe('enclave or garbler');
      expect(g.status).toBe('rejected');
    } finally {
      await proxy.close();
    }
    proxy = await enclaveEditing(TAG.TABLES, flipTables);
    try {
      const [g, e] = await aes('semi-honest', proxy.url);
      expect(hex(value(e)[0])).not.toBe(CT);
      expect(hex(value(g)[0])).toBe(hex(value(e)[0]));
    } finally {
      await proxy.close();
    }
    // The honest path through the same proxy gives the right answer (the proxy itself is sound).
    proxy = await tamperingProxy(server.url, () => {});
    try {
      const [g, e] = await aes('malicious', proxy.url);
      expect(hex(value(e)[0])).toBe(CT);
      expect(hex(value(g)[0])).toBe(CT);
    } finally {
      await proxy.close();
    }
  });

  it('a tampered table of a later job (the enclave garbling its cached copy of the circuit) fails τ', async () => {
    let tables = 0;
    const proxy = await tamperingProxy(server.url, (f) => {
      if (f[0] === 1 && f[1] === TAG.TABLES && ++tables === 2) f[2 + 8 + 16 * 3 + 1]! ^= 4;
    });
    const transports = createMemoryTransports(2, { recvTimeoutMs: 20_000 });
    const c = circuitFile('aes_128.txt');
    try {
      const sessions = await Promise.all(transports.map((t, p) => session({ transport: t, party: p, parties: 2 })));
      const enclave = enclaveFor({ url: proxy.url, measurement: server.measurement });
      const run = (p: number) => sessions[p]!.run(c, { inputs: [p === 0 ? KEY : PT], protocol: 'teleport-yao', mode: 'malicious', enclave });
      const first = await Promise.all([run(0), run(1)]);
      expect(hex(first[1][0])).toBe(CT);
      const [, e] = await both(run(0), run(1));
      expect(reason(e).check).toBe('gc-tau');
      await Promise.all(sessions.map((s) => s.close().catch(() => {})));
    } finally {
      c.free();
      await proxy.close();
    }
  });

  it('the x2⁰ labels and σ\'s are sealed to the evaluator: a host editing them is caught in both modes', async () => {
    // InputLabels: peer, tag, u32 part, then the sealed labels and σ's. (A deviating enclave, which
    // can seal what it likes, fails the σ/τ checks: wasm/crates/teleport/tests/malicious.rs.)
    for (const mode of ['malicious', 'semi-honest'] as const) {
      for (const at of [2 + 4 + 16 * 3 + 2, -7]) {
        const proxy = await enclaveEditing(TAG.INPUT_LABELS, (f) => void (f[at < 0 ? f.length + at : at]! ^= 0x40));
        try {
          const [g, e] = await aes(mode, proxy.url);
          expect(reason(e).code, `${mode} ${at}`).toBe('MALFORMED_MESSAGE');
          expect(reason(e).message).toMatch(/input labels/);
          expect(g.status).toBe('rejected');
        } finally {
          await proxy.close();
        }
      }
    }
  });

  it('wrong decoding bits fail τ', async () => {
    const proxy = await enclaveEditing(TAG.DECODING, (f) => void (f[2 + 4]! ^= 1));
    try {
      const [, e] = await aes('malicious', proxy.url);
      expect(reason(e).check).toBe('gc-tau');
    } finally {
      await proxy.close();
    }
  });
});

describe('a malicious garbler or evaluator', () => {
  // Malicious AES: the garbler's labels message is 128 x1 labels, 128 x2¹ labels and τ.
  const LABELS = 16 * 256 + 32;

  it('garbage x2¹ labels from the garbler fail their σ, naming the garbler', async () => {
    const [g, e] = await aes('malicious', server.url, (t) =>
      t.party === 0 ? tampering(t, (to, m) => m.length === LABELS && void (m[16 * 128 + 16 * 5 + 1]! ^= 2)) : t,
    );
    expect(reason(e)).toBeInstanceOf(EnclaveAbort);
    expect(reason(e).check).toBe('garbler-x2-share-labels');
    expect(reason(e).peer).toBe(0);
    expect(g.status).toBe('rejected');
  });

  it('a garbage x1 label fails the garbler-input check', async () => {
    const [, e] = await aes('malicious', server.url, (t) => (t.party === 0 ? tampering(t, (to, m) => m.length === LABELS && void (m[16 * 9]! ^= 0x80)) : t));
    expect(reason(e).check).toBe('garbler-input-labels');
  });

  it("an evaluator that forges the garbler's output label is caught by the garbler; in semi-honest mode it is not", async () => {
    // The evaluator's report of the garbler's outputs: 128 output labels (malicious).
    const [g, e] = await aes('malicious', server.url, (t) => (t.party === 1 ? tampering(t, (to, m) => m.length === 16 * 128 && void (m[16 * 40 + 3]! ^= 1)) : t));
    expect(hex(value(e)[0])).toBe(CT);
    expect(reason(g)).toBeInstanceOf(EnclaveAbort);
    expect(reason(g).code).toBe('ENCLAVE_CHECK_FAILED');
    expect(reason(g).check).toBe('evaluator-output-labels');
    expect(reason(g).peer).toBe(1);
    // Semi-honest: the report is the 16 output bytes, taken on trust. (The evaluator's first
    // 16-byte message to the garbler is its x2¹ share; the report is the second.)
    let sixteen = 0;
    const [g2, e2] = await aes('semi-honest', server.url, (t) =>
      t.party === 1 ? tampering(t, (to, m) => to === 0 && m.length === 16 && ++sixteen === 2 && void (m[0]! ^= 1)) : t,
    );
    expect(hex(value(e2)[0])).toBe(CT);
    expect(hex(value(g2)[0])).not.toBe(CT);
  });
});
