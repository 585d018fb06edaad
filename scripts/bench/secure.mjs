// The `secure` suite: what ts/secure costs on top of a transport, in Node.
//
// - throughput of 64 MiB sent as 1 MiB messages between two in-memory parties, plain
//   (ts/net/memory) vs wrapped in secureTransport (ChaCha20-Poly1305 per 1 MiB segment), and the
//   ratio; plain and secure rounds alternate so machine noise hits both alike;
// - ChaCha20-Poly1305 alone (encrypt + decrypt of 1 MiB, same thread), libsodium's and, in
//   Node, OpenSSL's (node:crypto, what the channel uses in Node): the cost the wrapper cannot
//   avoid when sender and receiver share one core;
// - handshake time (ms) of secureTransport for 2 and 4 parties over in-memory transports
//   (median; all pairs run at once).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const SUITE = 'secure';
const MiB = 1024 * 1024;

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  return s[s.length >> 1];
}

export async function run({ root, emit, quick }) {
  const dist = (p) => pathToFileURL(join(root, 'dist', p)).href;
  const { createMemoryTransports } = await import(dist('net/memory.js'));
  const { generateIdentity, secureTransport } = await import(dist('secure/index.js'));
  const sodium = (await import('libsodium-wrappers')).default;
  await sodium.ready;
  const row = (kase, metric, value, unit, impl) => emit({ suite: SUITE, case: kase, metric, value, unit, runtime: 'node', impl });

  const totalBytes = (quick ? 16 : 64) * MiB;
  const messageBytes = MiB;
  const rounds = quick ? 2 : 5;
  const handshakes = quick ? 5 : 25;
  const payload = sodium.randombytes_buf(messageBytes);

  const identities = await Promise.all([0, 1, 2, 3].map(() => generateIdentity()));
  const secureGroup = async (n) => {
    const inners = createMemoryTransports(n);
    const ids = identities.slice(0, n);
    return Promise.all(
      inners.map((inner, i) =>
        secureTransport(inner, {
          identity: ids[i],
          sessionId: 'bench',
          trust: 'pinned',
          peers: ids.map((id) => id.publicKey),
        }),
      ),
    );
  };

  /** Seconds to move totalBytes from party 0 to party 1 (sender and receiver concurrently). */
  const stream = async ([a, b]) => {
    const count = totalBytes / messageBytes;
    const started = performance.now();
    const sending = (async () => {
      for (let i = 0; i < count; i++) await a.send(1, payload);
    })();
    let received = 0;
    for (let i = 0; i < count; i++) received += (await b.recv(0)).length;
    await sending;
    const seconds = (performance.now() - started) / 1000;
    if (received !== totalBytes) throw new Error(`received ${received} of ${totalBytes} bytes`);
    return seconds;
  };

  const rates = { plain: [], secure: [] };
  for (let r = 0; r < rounds; r++) {
    const plain = createMemoryTransports(2);
    rates.plain.push(totalBytes / 1e6 / (await stream(plain)));
    await Promise.all(plain.map((t) => t.close()));
    const secure = await secureGroup(2);
    rates.secure.push(totalBytes / 1e6 / (await stream(secure)));
    await Promise.all(secure.map((t) => t.close()));
  }
  const kase = `${totalBytes / MiB}MiB-in-1MiB-messages`;
  const plainRate = median(rates.plain);
  const secureRate = median(rates.secure);
  row(kase, 'throughput', plainRate, 'MB/s', 'memory');
  row(kase, 'throughput', secureRate, 'MB/s', 'secure(memory) chacha20poly1305-ietf');
  row(kase, 'secure_to_plain', secureRate / plainRate, 'x', 'secure(memory) chacha20poly1305-ietf');

  // The AEAD alone, as the wrapper calls it: each record cipher this runtime has (libsodium's
  // Wasm build through libsodium-wrappers' copies in and out; OpenSSL's through node:crypto,
  // which the channel takes in Node), with the libsodium/OpenSSL ratio.
  const { sodiumCipher, nodeCipher } = await import(dist('secure/aead.js'));
  const ciphers = [
    [sodiumCipher(sodium), 'libsodium-wrappers chacha20poly1305-ietf'],
    [nodeCipher(), 'node:crypto (OpenSSL) chacha20poly1305-ietf'],
  ].filter(([c]) => c !== undefined);
  const aeadRates = {};
  {
    const key = sodium.randombytes_buf(32);
    const nonce = new Uint8Array(12);
    const ad = new Uint8Array(9);
    const seconds = new Map(ciphers.map(([c]) => [c, []]));
    // Rounds alternate between the ciphers so machine noise hits both alike.
    for (let r = 0; r < rounds; r++) {
      for (const [cipher] of ciphers) {
        const started = performance.now();
        for (let i = 0; i < totalBytes / messageBytes; i++) cipher.open(cipher.seal(payload, ad, nonce, key), ad, nonce, key);
        seconds.get(cipher).push((performance.now() - started) / 1000);
      }
    }
    for (const [cipher, impl] of ciphers) {
      aeadRates[cipher.name] = totalBytes / 1e6 / median(seconds.get(cipher));
      row('aead-seal+open-1MiB', 'throughput', aeadRates[cipher.name], 'MB/s', impl);
    }
    if (aeadRates['node:crypto'] && aeadRates.libsodium) {
      row('aead-seal+open-1MiB', 'node_crypto_to_libsodium', aeadRates['node:crypto'] / aeadRates.libsodium, 'x', 'node:crypto (OpenSSL) chacha20poly1305-ietf');
    }
  }

  for (const n of [2, 4]) {
    const times = [];
    for (let h = 0; h < handshakes; h++) {
      const started = performance.now();
      const group = await secureGroup(n);
      times.push(performance.now() - started);
      await Promise.all(group.map((t) => t.close()));
    }
    row(`handshake-${n}-parties`, 'latency', median(times), 'ms', 'secure(memory) x25519+ed25519+blake2b');
  }
}
