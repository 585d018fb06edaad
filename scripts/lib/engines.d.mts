// Types of engines.mjs for the TypeScript tests (the launchers are plain JavaScript; this keeps
// the tests' typecheck to the API they use, the common shape every launcher gives).

export type Engine = 'chromium' | 'firefox' | 'webkit';

export const ENGINES: readonly Engine[];
export const ENGINE_NAMES: Record<Engine, string>;
/** The executable each launcher drives, for messages. */
export const ENGINE_EXECUTABLES: Record<Engine, string>;
/** The Debian packages that provide each engine (`scripts/setup.sh --browser` installs them). */
export const ENGINE_PACKAGES: Record<Engine, string>;

export function engineAvailable(engine: Engine): boolean;
/** Engines selected by WEBMPC_BROWSERS (comma-separated); all by default. */
export function selectedEngines(): Engine[];

/** The calls every engine's page offers (a subset of Playwright's Page). */
export interface EnginePage {
  goto(url: string): Promise<unknown>;
  evaluate<R, A = undefined>(fn: (arg: A) => R | Promise<R>, arg?: A): Promise<R>;
  /** `fn` may be source text of an expression, as in Playwright. */
  waitForFunction<A>(fn: string | ((arg: A) => unknown), arg?: A, options?: { timeout?: number }): Promise<unknown>;
  addScriptTag(options: { type?: string; content?: string; url?: string }): Promise<unknown>;
  screenshot(options: { path: string }): Promise<unknown>;
  close(): Promise<void>;
}

export interface EngineBrowser {
  engine: Engine;
  /** e.g. 'Firefox 140.5.0esr' */
  version: string;
  page: EnginePage;
  /** Console errors/warnings and uncaught page errors of all its pages. */
  problems: string[];
  newPage(): Promise<EnginePage>;
  /** Ends the browser and every process it started (WebKit: the driver, MiniBrowser and Xvfb). */
  close(): Promise<void>;
}

export function launchEngine(engine: Engine): Promise<EngineBrowser>;
