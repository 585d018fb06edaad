// Rounds and bytes per phase, as the SDK session counts them (`Session.lastTraffic`; what a
// round is and what it bounds: ts/traffic.ts), for every protocol bench: a fresh set of
// sessions over the JS in-memory transport runs the given operations in turn, and after each
// one every party's traffic becomes rows with a `phase` (one per phase the protocol reported,
// and `total`) and a `party`:
//   rounds           this party's direction runs with its busiest peer (two parties: an upper
//                    bound on the critical path in one-way flights, exact in lockstep)
//   instance_rounds  the same on the busiest parallel-instance sub-channel (when there are any)
//   bytes            bytes this party sent (`bytes_received` beside it in the row)
// and a `time` row (phase `total`, no party): the operation's wall time, every party on this
// thread's event loop (their engine workers compute in parallel).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Runs `ops` (in order; each `{ case, run(session, party) }`) in one set of `parties` fresh
 * sessions over in-memory transports, and emits each operation's traffic and time.
 * `row` fills in the common fields: `(kase, metric, value, unit, extra) => emit(...)`.
 */
export async function trafficRows(sdk, { parties, ops, row, sessionOptions = {} }) {
  const transports = sdk.createMemoryTransports(parties, { recvTimeoutMs: 600_000 });
  const sessions = await Promise.all(transports.map((transport, party) => sdk.session({ transport, party, parties, ...sessionOptions })));
  try {
    for (const op of ops) {
      const t0 = performance.now();
      await Promise.all(sessions.map((s, p) => op.run(s, p)));
      row(op.case, 'time', performance.now() - t0, 'ms', { phase: 'total' });
      sessions.forEach((s, party) => {
        const t = s.lastTraffic;
        for (const [phase, c] of [...Object.entries(t.phases), ['total', t.total]]) {
          row(op.case, 'rounds', c.rounds, 'flights', { phase, party });
          if (c.instanceRounds > 0) row(op.case, 'instance_rounds', c.instanceRounds, 'flights', { phase, party });
          row(op.case, 'bytes', c.bytesSent, 'B', { phase, party, bytes_received: c.bytesReceived, messages_sent: c.messagesSent });
        }
      });
    }
  } finally {
    await Promise.all(sessions.map((s) => s.close()));
  }
}

const sdks = new Map();
/** The built SDK under `root` (dist/), initialised, with its program builders. */
async function load(root) {
  if (!sdks.has(root)) {
    sdks.set(
      root,
      (async () => {
        const dist = (f) => pathToFileURL(join(root, 'dist', f)).href;
        const sdk = await import(dist('index.js'));
        await sdk.init();
        return { sdk, programs: await import(dist('program/index.js')) };
      })(),
    );
  }
  return sdks.get(root);
}

/** Both operations of a case: a fresh session's first run (setup included) and the next. */
const firstAndSecond = (kase, run) => [
  { case: `${kase}-first`, run },
  { case: `${kase}-second`, run },
];

/**
 * authgc on a circuit case of ./baselines/cases.mjs (`{ name, text, inputs }`) among `n`
 * parties: party 0 evaluates, parties 0 and 1 own the inputs, everyone learns the output.
 */
export async function authgcTraffic(root, c, n, row) {
  const { sdk } = await load(root);
  const circuit = sdk.prepareCircuit(c.text);
  try {
    const run = (s, p) => s.run(circuit, { protocol: 'authgc', evaluator: 0, owners: [0, 1], inputs: p < 2 ? [c.inputs[p]] : [] });
    await trafficRows(sdk, { parties: n, ops: firstAndSecond(`${c.name}-n${n}`, run), row });
  } finally {
    circuit.free();
  }
}

/** MASCOT's Vickrey auction (webmpc/program) with `bids` 32-bit bids among `parties` parties. */
export async function mascotTraffic(root, { parties, bids }, row) {
  const { sdk, programs } = await load(root);
  const auction = await programs.vickreyAuction({ parties, bids, bits: 32 });
  const run = (s, p) => {
    const mine = auction.inputsOf(p).map((i) => BigInt((i * 2654435761) % 1000003));
    return s.run(auction, { protocol: 'mascot', inputs: auction.encodeInputs(p, mine) });
  };
  await trafficRows(sdk, { parties, ops: firstAndSecond(`vickrey-${bids}-bids-${parties}p`, run), row });
}

/**
 * teleport-yao (`mode` 'semi-honest' or 'malicious') on a circuit, party 0 garbling, party 1
 * beside the (simulated) enclave server at `enclaveUrl` with `measurement`: its preprocessing
 * (the garbler's setup with the enclave), then two runs.
 */
export async function teleportTraffic(root, { kase, text, inputs, mode, enclaveUrl, measurement }, row) {
  const { sdk } = await load(root);
  const net = await import(pathToFileURL(join(root, 'dist', 'net', 'node.js')).href);
  const WebSocket = await net.nodeWebSocket();
  const enclave = (p) => ({
    ...(p === 1 ? { url: enclaveUrl, WebSocket } : {}),
    policy: { simulatedMeasurements: [measurement] },
    allowSimulatedEnclave: true,
    recvTimeoutMs: 600_000,
  });
  const circuit = sdk.prepareCircuit(text);
  try {
    const ops = [
      { case: `${kase}-preprocess`, run: (s, p) => s.preprocess('teleport-yao', { garbler: 0, enclave: enclave(p) }) },
      ...firstAndSecond(kase, (s, p) => s.run(circuit, { protocol: 'teleport-yao', mode, enclave: enclave(p), inputs: [inputs[p]] })),
    ];
    await trafficRows(sdk, { parties: 2, ops, row });
  } finally {
    circuit.free();
  }
}
