// How a model request failed, in the terms an episode row and a run need (ModelError, in env/core).
import OpenAI from "openai";

/** A 2xx reply whose body is not a chat completion: retried like a dropped connection. */
export class BrokenReply extends Error {
  override name = "BrokenReply";
}

const oneLine = (text: string, max = 160) => {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
};

/** Throws BrokenReply unless `data` is a chat completion with a choice that holds a message. */
export function checkCompletion(data: unknown): asserts data is OpenAI.Chat.ChatCompletion {
  if (typeof data === "string") {
    const kind = /^\s*</.test(data) ? "an HTML page" : data.trim() ? `text that is not JSON ("${oneLine(data, 60)}")` : "an empty body";
    throw new BrokenReply(`a 200 reply that is not a chat completion: ${kind}`);
  }
  const choices = (data as { choices?: unknown } | null)?.choices;
  if (!Array.isArray(choices)) throw new BrokenReply("a 200 reply that is not a chat completion: JSON without `choices`");
  if (!choices.length) throw new BrokenReply("a 200 reply that is not a chat completion: `choices` is empty");
  if (!(choices[0] as { message?: unknown })?.message) throw new BrokenReply("a 200 reply that is not a chat completion: its first choice has no `message`");
}

/** The body of a 2xx reply could not be read whole: JSON cut short, or the connection dropped mid-body. */
function brokenBody(err: unknown): string | undefined {
  if (err instanceof SyntaxError) return `a 200 reply whose body is not complete JSON (${oneLine(err.message, 80)})`;
  if (err instanceof TypeError && /terminated|body|socket/i.test(err.message)) return `the connection dropped while the reply's body was read (${oneLine(err.message, 80)})`;
  return undefined;
}

/** An error reply's JSON body in OpenAI's shape (`{"error": {"message", "type", "param", "code"}}`), which
 *  is the only one the `openai` client reads: from any other it keeps no message ("400 status code (no
 *  body)"), so a context-length error would not be seen as one. Shapes of OpenAI-compatible servers:
 *  vLLM before 0.10.1, the fields at the top level (`{"object": "error", "message", ...}`,
 *  vllm-project/vllm#12886, changed by #22099); FastAPI's `{"detail": "..."}` (`transformers serve`,
 *  Ray Serve) and its request validation `{"detail": [{"loc", "msg"}]}`; TGI's `{"error": "...",
 *  "error_type"}`. Anything else is left as it is. */
export function openAIErrorBody(body: unknown): unknown {
  if (!body || typeof body !== "object" || Array.isArray(body)) return body;
  const b = body as Record<string, unknown>;
  if (b.error && typeof b.error === "object") return body;
  const str = (v: unknown) => (typeof v === "string" && v ? v : undefined);
  const wrap = (message: string, type?: unknown, code?: unknown, param?: unknown) => ({
    error: { message, ...(str(type) ? { type } : {}), ...(str(param) ? { param } : {}), ...(str(code) ? { code } : {}) },
  });
  if (str(b.error)) return wrap(b.error as string, b.error_type);
  if (str(b.message)) return wrap(b.message as string, b.type, b.code, b.param);
  if (str(b.detail)) return wrap(b.detail as string);
  if (Array.isArray(b.detail) && b.detail.length) {
    const items = b.detail.map((d) => {
      const { loc, msg } = (d ?? {}) as { loc?: unknown; msg?: unknown };
      const where = Array.isArray(loc) ? loc.join(".") : "";
      return `${where ? `${where}: ` : ""}${typeof msg === "string" ? msg : JSON.stringify(d)}`;
    });
    return wrap(items.join("; "));
  }
  return body;
}

const RETRYABLE_STATUS = new Set([408, 409, 429]);

export function isRetryable(err: unknown): boolean {
  if (err instanceof OpenAI.APIUserAbortError) return false;
  if (err instanceof BrokenReply || brokenBody(err)) return true;
  if (err instanceof OpenAI.APIConnectionError) return true; // includes timeouts
  if (err instanceof OpenAI.APIError) return err.status !== undefined && (RETRYABLE_STATUS.has(err.status) || err.status >= 500);
  return false;
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
  if (err instanceof BrokenReply) return err.message;
  const broken = brokenBody(err);
  if (broken) return broken;
  if (err instanceof OpenAI.APIConnectionTimeoutError) return "request timed out";
  if (err instanceof OpenAI.APIConnectionError) {
    const cause = (err as { cause?: { cause?: { code?: string }; code?: string; message?: string } }).cause;
    const code = cause?.cause?.code ?? cause?.code;
    return `connection failed${code ? ` (${code})` : ""}: ${err.message}`;
  }
  // The endpoint's message on one line, never a whole page
  // (a code is named when it says more than the status: vLLM's error bodies repeat the status as `code`)
  if (err instanceof OpenAI.APIError) return `HTTP ${err.status ?? "?"}${typeof err.code === "string" && err.code ? ` ${err.code}` : ""}: ${oneLine(err.message)}`;
  return oneLine(err instanceof Error ? err.message : String(err));
}

/** Errors that no retry or later episode can fix, with what to do about them. */
export function fatalReason(err: unknown, baseUrl: string, keyEnv: string, model: string): string | undefined {
  if (!(err instanceof OpenAI.APIError) || err instanceof OpenAI.APIConnectionError) return undefined;
  if (err.status === 401) return `the endpoint ${baseUrl} refused the key (401): check the key in $${keyEnv} (or name another variable with --api-key-env)`;
  if (err.status === 403) return `the endpoint ${baseUrl} denied access (403): the key in $${keyEnv} lacks permission for model "${model}"`;
  if (err.status === 405 || err.status === 501)
    return `the endpoint ${baseUrl} answered ${err.status} to POST /chat/completions: it is not an OpenAI-compatible chat-completions server; check --base-url (it should end in /v1)`;
  if (err.status === 404) return `the endpoint ${baseUrl} does not know model "${model}" (404): check --model (GET ${baseUrl.replace(/\/$/, "")}/models lists them) and --base-url`;
  return undefined;
}
