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
  type EngineBrowser,
  type EnginePage,
} from '../../scripts/lib/engines.mjs';

export { ENGINES, ENGINE_NAMES, launchEngine as launch, type Engine, type EngineBrowser, type EnginePage };

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
