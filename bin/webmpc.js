#!/usr/bin/env node
// The `webmpc` command (`npx webmpc ...`). The command itself is dist/cli.js, which the build
// makes; this stub stays in the repository so that `npx webmpc` in a checkout finds the command
// before anything is built, and says what to do instead of "webmpc: not found".
import { existsSync } from 'node:fs';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write(
    'webmpc: this checkout is not built yet (dist/cli.js is missing): run `npm run build` first ' +
      '(`npm run setup` installs what the build needs)\n',
  );
  process.exit(2);
}
await import(cli.href);
