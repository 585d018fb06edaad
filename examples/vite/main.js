// Two parties in one page over in-memory transports (in a real app each party is a browser, and
// the transport comes from connectMesh in 'webmpc/net'). Vite copies webmpc_bg.wasm into the
// build by itself: nothing to configure.
import { circuit, createMemoryTransports, decodeUint, encodeUint, init, session } from 'webmpc';
// webmpc/secure fetches libsodium (about 470 KB) in a chunk of its own, the first time it is
// needed: importing it costs the entry chunk almost nothing.
import { generateIdentity, publicKeyToHex } from 'webmpc/secure';

async function richer(alice, bob) {
  await init();
  const b = new circuit.CircuitBuilder();
  b.output(b.input(0, 32).gt(b.input(1, 32)));
  const built = b.build();
  const transports = createMemoryTransports(2);
  const outs = await Promise.all(
    [alice, bob].map(async (value, party) => {
      const s = await session({ transport: transports[party], party, parties: 2 });
      try {
        const [out] = await s.run(built, { inputs: [encodeUint(value, 32)] });
        return decodeUint(out, 1) === 1n;
      } finally {
        await s.close();
      }
    }),
  );
  return outs[0];
}

const show = (id, text) => (document.getElementById(id).textContent = text);
Promise.all([richer(1_000_000, 750_000), generateIdentity()]).then(
  ([aliceIsRicher, identity]) => {
    show('answer', `Alice is richer: ${aliceIsRicher}`);
    show('identity', `an identity made with webmpc/secure: ${publicKeyToHex(identity.publicKey).slice(0, 16)}...`);
    window.result = { ok: true, aliceIsRicher, key: publicKeyToHex(identity.publicKey) };
  },
  (err) => {
    show('answer', `failed: ${err}`);
    window.result = { ok: false, error: String(err?.stack ?? err) };
  },
);
