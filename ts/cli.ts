#!/usr/bin/env node
/**
 * The `webmpc` command's entry point (`dist/cli.js`, which `bin/webmpc.js` runs): the commands
 * themselves are in `./cli/` (`./cli/main.ts` dispatches them).
 */
import { main } from './cli/main.js';

process.exitCode = await main(process.argv.slice(2));
// Everything main opened is closed by now, so Node exits on its own. Should anything still hold the
// event loop (a bug), exit anyway, and say so: a finished party must never linger.
setTimeout(() => {
  process.stderr.write('webmpc: still running 2 s after finishing (a handle was left open); exiting\n');
  process.exit();
}, 2_000).unref();
