// The browser tests' view of Debian chromium: the launcher shared with the benchmarks, plus the
// rule for when browser tests may be skipped.
import { existsSync } from 'node:fs';
import { CHROMIUM } from '../../scripts/lib/chromium.mjs';

export { CHROMIUM, launch, type Browser } from '../../scripts/lib/chromium.mjs';

// scripts/test.sh runs `setup.sh --browser` first and sets this: a missing browser is then a
// failure, not a skip.
const REQUIRED = process.env.WEBMPC_REQUIRE_BROWSER === '1';

/** Whether browser tests must be skipped; says so loudly when they are. */
export function skipBrowserTests(): boolean {
  if (existsSync(CHROMIUM) || REQUIRED) return false;
  const bar = '!'.repeat(78);
  console.warn(
    `\n${bar}\n!! BROWSER TESTS SKIPPED: ${CHROMIUM} not found.\n` +
      `!! Run \`bash scripts/setup.sh --browser\` (apt-get install chromium), or \`npm test\`, which does.\n${bar}\n`,
  );
  return true;
}
