import type { z } from "zod";
import { httpStatusOf } from "../util/index.ts";

/** An error with an HTTP status; the message is sent to the client, `code` too when set (for machines). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
    readonly headers: Record<string, string> = {},
    readonly code?: string,
  ) {
    super(message);
    this.name = "HttpError";
  }
}

/** 400 naming the first bad field and the value given. */
export function badRequest(error: z.ZodError, body: unknown): HttpError {
  const issue = error.issues[0]!;
  const field = issue.path.map(String).join(".");
  let given: unknown = body;
  for (const key of issue.path) {
    given = given !== null && typeof given === "object" ? (given as Record<PropertyKey, unknown>)[key as PropertyKey] : undefined;
  }
  const shown = given === undefined ? "" : ` (got ${preview(given)})`;
  const more = error.issues.length > 1 ? ` (+${error.issues.length - 1} more issue${error.issues.length > 2 ? "s" : ""})` : "";
  const message = issue.code === "unrecognized_keys" ? `${field ? `${field}: ` : ""}unknown field(s) ${issue.keys.join(", ")}` : `${field || "body"}: ${issue.message}${shown}`;
  return new HttpError(400, message + more, issue.code === "unrecognized_keys" ? [field, issue.keys[0]].filter(Boolean).join(".") : field || "body");
}

function preview(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Any thrown value as the HttpError a client gets: this vocabulary's own, else the util one's status, else 500. */
export function asHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  const status = httpStatusOf(err);
  if (status !== undefined) return new HttpError(status, (err as Error).message);
  return new HttpError(500, `internal error: ${err instanceof Error ? err.message : String(err)}`);
}

/** The JSON error body of every route (ErrorResponse in ./schemas.ts). */
export function errorBody(e: HttpError): { error: string; field?: string; code?: string } {
  return { error: e.message, ...(e.field ? { field: e.field } : {}), ...(e.code ? { code: e.code } : {}) };
}
