// How a model request failed, in the terms an episode row and a run need.
import OpenAI from "openai";

/** Ends one episode: `model_error` (the endpoint failed after retries) or `context_limit`. */
export class ModelError extends Error {
  constructor(
    readonly status: "model_error" | "context_limit",
    message: string,
    /** Set when no later request can succeed either (bad key, unknown model): the run stops. */
    readonly fatal?: string,
  ) {
    super(message);
    this.name = "ModelError";
  }
}

/** The run was interrupted (Ctrl-C, target reached): the episode is dropped, not recorded. */
export class RunAborted extends Error {
  constructor() {
    super("aborted");
    this.name = "RunAborted";
  }
}

const RETRYABLE_STATUS = new Set([408, 409, 429]);

export function isRetryable(err: unknown): boolean {
  if (err instanceof OpenAI.APIUserAbortError) return false;
  if (err instanceof OpenAI.APIConnectionError) return true; // includes timeouts
  if (err instanceof OpenAI.APIError) return err.status !== undefined && (RETRYABLE_STATUS.has(err.status) || err.status >= 500);
  return false;
}

export function isContextLimit(err: unknown): boolean {
  const e = err as { code?: unknown; status?: unknown; message?: unknown };
  if (e?.code === "context_length_exceeded") return true;
  return e?.status === 400 && typeof e.message === "string" && /context length|maximum context|too many tokens|context_length/i.test(e.message);
}

/** Seconds or an HTTP date in `Retry-After` (or milliseconds in `retry-after-ms`), as milliseconds. */
export function retryAfterMs(err: unknown, now = Date.now()): number | undefined {
  const headers = err instanceof OpenAI.APIError ? err.headers : undefined;
  if (!headers) return undefined;
  const ms = Number(headers.get("retry-after-ms"));
  if (headers.get("retry-after-ms") !== null && Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers.get("retry-after");
  if (value === null) return undefined;
  const secs = Number(value);
  if (Number.isFinite(secs) && secs >= 0) return secs * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** One line: what failed, with the HTTP status and the endpoint's own message. */
export function describe(err: unknown): string {
  if (err instanceof OpenAI.APIConnectionTimeoutError) return "request timed out";
  if (err instanceof OpenAI.APIConnectionError) {
    const cause = (err as { cause?: { cause?: { code?: string }; code?: string; message?: string } }).cause;
    const code = cause?.cause?.code ?? cause?.code;
    return `connection failed${code ? ` (${code})` : ""}: ${err.message}`;
  }
  if (err instanceof OpenAI.APIError) return `HTTP ${err.status ?? "?"}${err.code ? ` ${err.code}` : ""}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/** Errors that no retry or later episode can fix, with what to do about them. */
export function fatalReason(err: unknown, baseUrl: string, keyEnv: string, model: string): string | undefined {
  if (!(err instanceof OpenAI.APIError) || err instanceof OpenAI.APIConnectionError) return undefined;
  if (err.status === 401) return `the endpoint ${baseUrl} refused the key (401): check the key in $${keyEnv} (or name another variable with --api-key-env)`;
  if (err.status === 403) return `the endpoint ${baseUrl} denied access (403): the key in $${keyEnv} lacks permission for model "${model}"`;
  if (err.status === 404) return `the endpoint ${baseUrl} does not know model "${model}" (404): check --model (GET ${baseUrl.replace(/\/$/, "")}/models lists them) and --base-url`;
  return undefined;
}
