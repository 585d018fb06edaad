/**
 * `plain`: no privacy at all. Every party sends its input values in the clear to every other
 * party, and each evaluates the whole circuit itself (in Rust, the same evaluator the tests use
 * as a reference).
 *
 * What it protects against: **nothing**. Every party (and anyone who can read the transport)
 * sees every input. A party that lies about its inputs changes the result, and nothing checks
 * that the others computed the same thing. It exists for debugging an application's circuit and
 * assignment, and as a reference for the real protocols; never use it with real secrets.
 */
import { PreparedCircuit } from '../circuit/source.js';
import { ProtocolAbort, WebmpcError } from '../errors.js';
import type { CircuitJob, Outputs, ProtocolContext, ProtocolModule } from './types.js';
import { plural } from './util.js';

/** The types `plain` is written over: no roles, no preprocessing, no state. */
export interface PlainTypes {
  readonly computes: 'circuit';
  readonly roleOptions: Record<never, never>;
  readonly roles: Record<never, never>;
  readonly preprocessOptions: Record<never, never>;
  readonly preprocessParams: Record<never, never>;
  readonly state: undefined;
}

async function run(ctx: ProtocolContext<undefined>, job: CircuitJob<Record<never, never>>): Promise<Outputs> {
  const circuit = job.circuit as PreparedCircuit; // check() refused streams
  const widths = job.shape.inputWidths;
  // Everyone sends all their values to everyone, length-prefixed, in one message.
  const encoded = encodeValues(job.inputs);
  const peers = [...Array(ctx.parties).keys()].filter((p) => p !== ctx.party);
  await Promise.all(peers.map((p) => ctx.transport.send(p, encoded)));
  const values: Uint8Array[] = new Array(job.owners.length);
  let k = 0;
  job.owners.forEach((o, i) => {
    if (o === ctx.party) values[i] = job.inputs[k++]!;
  });
  for (const p of peers) {
    const theirs = decodeValues(await ctx.transport.recv(p), p);
    const slots = job.owners.flatMap((o, i) => (o === p ? [i] : []));
    // The parties agreed on the circuit and the owners, so a well-behaved peer sends exactly this.
    if (theirs.length !== slots.length) {
      throw new ProtocolAbort('MALFORMED_MESSAGE', `party ${p} sent ${plural(theirs.length, 'input value')}; it owns ${slots.length}`, {
        peer: p,
      });
    }
    slots.forEach((i, j) => {
      const v = theirs[j]!;
      if (v.length !== Math.ceil(widths[i]! / 8)) {
        throw new ProtocolAbort('MALFORMED_MESSAGE', `party ${p} sent ${plural(v.length, 'byte')} for circuit input ${i}`, { peer: p });
      }
      values[i] = v;
    });
  }
  ctx.progress('evaluating', 0, circuit.gates);
  const out = circuit.evaluate(values);
  ctx.progress('evaluating', circuit.gates, circuit.gates);
  return out.map((v, i) => (job.outputs[i]!.includes(ctx.party) ? v : undefined));
}

function encodeValues(values: readonly Uint8Array[]): Uint8Array {
  const total = values.reduce((n, v) => n + 4 + v.length, 4);
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  view.setUint32(0, values.length, true);
  let at = 4;
  for (const v of values) {
    view.setUint32(at, v.length, true);
    out.set(v, at + 4);
    at += 4 + v.length;
  }
  return out;
}

function decodeValues(bytes: Uint8Array, peer: number): Uint8Array[] {
  const bad = () => new ProtocolAbort('MALFORMED_MESSAGE', `party ${peer} sent malformed plain inputs`, { peer });
  if (bytes.length < 4) throw bad();
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getUint32(0, true);
  const out: Uint8Array[] = [];
  let at = 4;
  for (let i = 0; i < n; i++) {
    if (at + 4 > bytes.length) throw bad();
    const len = view.getUint32(at, true);
    if (at + 4 + len > bytes.length) throw bad();
    out.push(bytes.slice(at + 4, at + 4 + len));
    at += 4 + len;
  }
  if (at !== bytes.length) throw bad();
  return out;
}

/** The `plain` protocol module. */
export const plain: ProtocolModule<PlainTypes> = {
  name: 'plain',
  version: 1,
  security: 'none',
  protects:
    'Nothing: every party sends its inputs in the clear and evaluates the circuit itself. ' +
    'For debugging and as a reference; never for real secrets.',
  computes: 'circuit',
  parties: { min: 2, max: 65_535 },
  roleOptions: [],
  roles: () => ({}),
  check(job) {
    if (!(job.circuit instanceof PreparedCircuit)) {
      throw new WebmpcError('INVALID_ARGUMENT', 'the plain protocol needs the whole circuit, not a stream');
    }
  },
  run,
};
