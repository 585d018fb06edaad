/**
 * The CLI's failure kinds, which `main` maps onto exit codes: {@link UsageError} is 2 (the
 * caller's mistake), {@link Interrupted} is 128 + the signal, anything else is 1 (the
 * computation failed). Each prints one line, never a stack.
 */

/** A mistake of the caller (options, files, circuits, input values): one line, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The run was stopped by a signal; exits with 128 + its number (130 SIGINT, 143 SIGTERM). */
export class Interrupted extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`interrupted (${signal})`);
    this.name = 'Interrupted';
  }
}

/** `util.parseArgs` rejections (unknown option, missing value) are usage errors too. */
export function isParseArgsError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}

/** Why a file could not be read or written, in a few words (the errno, never the path's contents). */
export function fileProblem(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'is a directory';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return typeof code === 'string' ? code : 'unreadable';
}
