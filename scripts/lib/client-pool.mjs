// A process of scripted client bidders for the auction at scale (servers-demo.mjs): gives every
// bid of its part through `submit` and prints one JSON object: { clients, errors, bytes }, with
// outputs as decimal strings and errors as { code, message }. A process holds three sockets per
// bidder, so more bidders than one process may open files for are spread over several.
// Usage: node scripts/lib/client-pool.mjs '{"root", "urls", "keys", "room", "timeoutS", "bids": ["…"]}'
import { submitAll } from './servers-demo.mjs';

const job = JSON.parse(process.argv[2] ?? '{}');
const r = await submitAll({ ...job, bids: job.bids.map(BigInt) });
process.stdout.write(
  JSON.stringify({
    clients: r.clients.map((c) => c && { ...c, outputs: c.outputs.map(String) }),
    errors: job.bids.map((_, k) => r.errors[k] && { code: r.errors[k].code, message: r.errors[k].message }),
    bytes: r.bytes,
  }),
  // Exit once written: nothing of the run is left to wait for.
  () => process.exit(0),
);
