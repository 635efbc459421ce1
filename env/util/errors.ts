// The one error vocabulary. What the user got wrong (a flag, a file, a request body, an agent turn)
// is a UserError: the CLI prints its message and exits 2, a server answers 400. Asking something
// of what is in the wrong state (an episode that has ended, an output file another run owns) is a
// StateError: exit 2, HTTP 409. The machine refusing to keep a file (a full disk, an I/O error) is a
// StorageError naming the file: one line, exit 1. Anything else is a fault of ehrgym or its surroundings.

export class UserError extends Error {
  readonly httpStatus: number = 400;
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export class StateError extends Error {
  readonly httpStatus: number = 409;
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** A zod error's first issue as "field.path: message" (`root` names the value itself when the path is empty). */
export function firstIssue(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }, root: string): string {
  const issue = error.issues[0]!;
  return `${issue.path.map(String).join(".") || root}: ${issue.message}`;
}

/** The HTTP status a server answers for an error of this vocabulary, or undefined for a fault. */
export function httpStatusOf(err: unknown): number | undefined {
  return err instanceof UserError || err instanceof StateError ? err.httpStatus : undefined;
}

/** Errors by which the machine refuses to keep what is written: full disk, quota, I/O error, read-only file system, file too large. */
const STORAGE_CODES = new Set(["ENOSPC", "EDQUOT", "EIO", "EROFS", "EFBIG"]);

/**
 * The machine refused to keep what ehrgym writes to `path`: neither the user's mistake nor a fault of
 * ehrgym, so the CLI prints this one line (no stack) and exits 1. `code`: the errno name (ENOSPC...).
 */
export class StorageError extends Error {
  constructor(
    readonly path: string,
    readonly code: string,
    readonly reason: string,
    hint?: string,
  ) {
    super(`cannot write ${path}: ${reason} (${code})${hint ? `; ${hint}` : ""}`);
    this.name = new.target.name;
  }

  /** The same error with what to do next appended to its message. */
  withHint(hint: string): StorageError {
    return new StorageError(this.path, this.code, this.reason, hint);
  }
}

/** `err` as a StorageError naming `path` when it is one of the machine's refusals to store data, else `err` unchanged. */
export function storageError(path: string, err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (err instanceof StorageError || typeof code !== "string" || !STORAGE_CODES.has(code)) return err;
  // Node's message is "ENOSPC: no space left on device, write": the reason is the part between.
  const reason = /^[A-Z0-9]+: ([^,]+)/.exec((err as Error).message)?.[1] ?? code;
  return new StorageError(path, code, reason);
}
