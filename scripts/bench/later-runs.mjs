#!/usr/bin/env node
// A session's first and later authgc runs under a shaped network: two parties in this process,
// SDK sessions over in-memory links shaped to a profile of scripts/lib/shaper.mjs, three AES-128
// runs per session, three sessions. The network suite times fresh sessions only; this shows what
// a session's later runs cost (no setup), where a flight cut in preprocessing shows in full.
//
//   node scripts/bench/later-runs.mjs [root=this repository] [profile=continent]
//
// `root` is a built checkout (its dist/ and scripts/lib/shaper.mjs), so two builds can be
// compared by running this once for each. Prints each session's run times (wall ms).
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { circuitsDir } from './garble.mjs';

const here = fileURLToPath(new URL('../..', import.meta.url));
const root = resolve(process.argv[2] ?? here);
const prof = process.argv[3] ?? 'continent';
const sdk = await import(pathToFileURL(join(root, 'dist', 'index.js')).href);
const { shapeTransports, profile } = await import(pathToFileURL(join(root, 'scripts', 'lib', 'shaper.mjs')).href);
await sdk.init();
const circuit = sdk.prepareCircuit(await readFile(join(circuitsDir(here), 'aes_128.txt'), 'utf8'));
const sessions = [];
for (let k = 0; k < 3; k++) {
  const ts = shapeTransports(sdk.createMemoryTransports(2, { recvTimeoutMs: 60_000 }), profile(prof));
  const ss = await Promise.all(ts.map((transport, party) => sdk.session({ transport, party, parties: 2 })));
  const times = [];
  for (let r = 0; r < 3; r++) {
    const t0 = performance.now();
    await Promise.all(ss.map((s, p) => s.run(circuit, { protocol: 'authgc', inputs: [new Uint8Array(16).fill(p)] })));
    times.push(Math.round(performance.now() - t0));
  }
  await Promise.all(ss.map((s) => s.close()));
  sessions.push(times.join(' / '));
}
circuit.free();
console.log(`${root}, ${prof}: authgc AES-128, runs 1 / 2 / 3 of a session (ms): ${sessions.join(';  ')}`);
