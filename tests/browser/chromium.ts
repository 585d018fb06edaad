// Debian's chromium driven by playwright-core (never a Playwright-downloaded browser), with the
// flags that work as root on this machine kind, in a fresh profile per launch.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.WEBMPC_CHROMIUM ?? '/usr/bin/chromium';
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

export interface Browser {
  page: Page;
  /** Console errors and warnings and uncaught page errors, for tests to assert there are none. */
  problems: string[];
  close(): Promise<void>;
}

export async function launch(): Promise<Browser> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'webmpc-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      chromiumSandbox: false,
      args: [
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      timeout: 60_000,
    });
  } catch (err) {
    await rm(userDataDir, { recursive: true, force: true });
    throw err;
  }
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning') {
      problems.push(`${msg.type()}: ${msg.text()} (${msg.location().url})`);
    }
  });
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  return {
    page,
    problems,
    close: async () => {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}
