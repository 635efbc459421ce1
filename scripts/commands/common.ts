import { z } from "zod";

/** A user error on the command line: printed without a stack, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** Parse commander's option object with a zod schema; errors name the flag and the value given. */
export function parseOptions<S extends z.ZodType>(schema: S, raw: unknown): z.infer<S> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const key = issue.path.map(String).join(".");
    const flag = key ? `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}` : "options";
    const given = key && raw && typeof raw === "object" ? (raw as Record<string, unknown>)[String(issue.path[0])] : undefined;
    return `${flag}: ${issue.message}${given !== undefined ? ` (got ${JSON.stringify(given)})` : ""}`;
  });
  throw new UsageError(lines.join("\n"));
}

/** Commander collects repeatable options through this. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Keeps a server command running until SIGINT or SIGTERM, then closes the server. */
export function closeOnSignal(server: { close(): Promise<void> }): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      void server.close().then(resolve);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}
