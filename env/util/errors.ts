// The one error vocabulary. What the user got wrong (a flag, a file, a request body, an agent turn)
// is a UserError: the CLI prints its message and exits 2, a server answers 400. Asking something
// of what is in the wrong state (an episode that has ended, an output file another run owns) is a
// StateError: exit 2, HTTP 409. Anything else is a fault of ehrgym or its surroundings.

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
