// The browser tests' view of the three engines: the launchers shared with the benchmarks, the
// rule for when an engine's tests may be skipped, and what each engine is known to lack, so that
// a test can expect the typed error instead of the feature (and fails if the engine changes).
import {
  ENGINES,
  ENGINE_EXECUTABLES,
  ENGINE_NAMES,
  ENGINE_PACKAGES,
  engineAvailable,
  launchEngine,
  selectedEngines,
  type Engine,
} from '../../scripts/lib/engines.mjs';

export { ENGINES, ENGINE_NAMES, launchEngine, type Engine };

/** The calls every engine's page offers (a subset of Playwright's Page). */
export interface EnginePage {
  goto(url: string): Promise<unknown>;
  evaluate<R, A = undefined>(fn: (arg: A) => R | Promise<R>, arg?: A): Promise<R>;
  waitForFunction<A>(fn: (arg: A) => unknown, arg?: A, options?: { timeout?: number }): Promise<unknown>;
  addScriptTag(options: { type?: string; content?: string; url?: string }): Promise<unknown>;
  screenshot(options: { path: string }): Promise<unknown>;
  /** `runBeforeUnload`: let the page run its unload handlers (pagehide), as a person closing a tab does. */
  close(options?: { runBeforeUnload?: boolean }): Promise<void>;
}

export interface EngineBrowser {
  engine: Engine;
  version: string;
  page: EnginePage;
  problems: string[];
  newPage(): Promise<EnginePage>;
  close(): Promise<void>;
}

/** Launches `engine`, typed with the common page API. */
export function launch(engine: Engine): Promise<EngineBrowser> {
  return launchEngine(engine) as unknown as Promise<EngineBrowser>;
}

/**
 * What the engines, as Debian builds them, can do. WebKitGTK is built without WebRTC
 * (`RTCPeerConnection` is not defined), so its pages reach other parties through the relay.
 */
export const SUPPORTS: Record<Engine, { webrtc: boolean }> = {
  chromium: { webrtc: true },
  firefox: { webrtc: true },
  webkit: { webrtc: false },
};

// scripts/test.sh runs `setup.sh --browser` first and sets this: a missing browser is then a
// failure, not a skip.
const REQUIRED = process.env.WEBMPC_REQUIRE_BROWSER === '1';

/** The engines to test: those selected (WEBMPC_BROWSERS, default all). */
export const TESTED: Engine[] = selectedEngines();

/** Whether `engine`'s tests must be skipped (not selected, or not installed); says so loudly. */
export function skipEngine(engine: Engine): boolean {
  if (!TESTED.includes(engine)) return true;
  if (engineAvailable(engine) || REQUIRED) return false;
  const bar = '!'.repeat(78);
  console.warn(
    `\n${bar}\n!! ${ENGINE_NAMES[engine].toUpperCase()} TESTS SKIPPED: ${ENGINE_EXECUTABLES[engine]} not found.\n` +
      `!! Run \`bash scripts/setup.sh --browser\` (apt-get install ${ENGINE_PACKAGES[engine]}), or \`npm test\`, which does.\n${bar}\n`,
  );
  return true;
}

/** The engines whose tests run here, for describe.each. */
export function enginesToTest(): Engine[] {
  return ENGINES.filter((e) => !skipEngine(e));
}
