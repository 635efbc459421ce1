// The text protocol (PROTOCOL.md section 1): how one agent turn is read and what the environment answers.
import { dropLastCodePoint, HARNESS_JSON_MAX_DEPTH, jsonLoads, type Py, pyStrip } from "../python/index.ts";
import { connectionErrorMessage, httpErrorMessage, prepareRequestsUrl, type PreparedUrl } from "./requests-url.ts";

export const CALL_FINISH = "Please call FINISH if you have got answers for all the questions and finished all the requested tasks";
export const POST_ACCEPTED = `POST request accepted and executed successfully. ${CALL_FINISH}`;
export const POST_INVALID = "Invalid POST request";

/** What a GET reply puts before and after the response text. */
export const GET_REPLY_AROUND = ["Here is the response from the GET request:\n", `. ${CALL_FINISH}`] as const;

export function getReply(data: string): string {
  return GET_REPLY_AROUND[0] + data + GET_REPLY_AROUND[1];
}
export function getErrorReply(error: string): string {
  return `Error in sending the GET request: ${error}`;
}

export type TextTurn =
  /** `url` is what the harness requests: the text after GET plus "&_format=json". */
  | { kind: "GET"; url: string }
  /** `payload` is set when Python's json.loads accepts the body (then the reply is POST_ACCEPTED). */
  | { kind: "POST"; url: string; bodyText: string; payload?: Py }
  | { kind: "FINISH"; result: string }
  | { kind: "INVALID" };

/** Removes the code fences exactly as the harness does: strip, drop "```tool_code" and "```", strip. */
export function cleanTurn(content: string): string {
  return pyStrip(pyStrip(content).replaceAll("```tool_code", "").replaceAll("```", ""));
}

/** Reads one agent turn like the official harness (first matching prefix wins; anything else is invalid). */
export function parseTextTurn(content: string): TextTurn {
  const r = cleanTurn(content);
  if (r.startsWith("GET")) return { kind: "GET", url: pyStrip(r.slice(3)) + "&_format=json" };
  if (r.startsWith("POST")) {
    const lines = r.split("\n");
    const bodyText = lines.slice(1).join("\n");
    const url = pyStrip(lines[0]!.slice(4));
    try {
      return { kind: "POST", url, bodyText, payload: jsonLoads(bodyText, HARNESS_JSON_MAX_DEPTH) };
    } catch {
      return { kind: "POST", url, bodyText };
    }
  }
  if (r.startsWith("FINISH(")) return { kind: "FINISH", result: dropLastCodePoint(r).slice(7) };
  return { kind: "INVALID" };
}

/** Where a URL written by the agent goes: a request relative to the FHIR base, or the error requests would raise. */
export type Route =
  | { ok: true; path: string; url: string }
  | { ok: false; error: string; url?: string; status?: number };

/** Resolves agent URLs against one episode's api_base (e.g. http://localhost:8080/fhir/). */
export class UrlRouter {
  readonly base: PreparedUrl;

  constructor(readonly apiBase: string) {
    const p = prepareRequestsUrl(apiBase);
    if (!p.ok) throw new Error(`api_base ${JSON.stringify(apiBase)} is not a usable URL: ${p.error}`);
    if (!p.prepared.path.endsWith("/")) throw new Error(`api_base ${JSON.stringify(apiBase)} must end with "/"`);
    this.base = p.prepared;
  }

  /** A URL on another host is never contacted: it gets the connection error requests would report.
   *  A path on the same server outside the FHIR base gets the 404 the servlet container sends. */
  route(url: string): Route {
    const p = prepareRequestsUrl(url);
    if (!p.ok) return { ok: false, error: p.error };
    const u = p.prepared;
    const b = this.base;
    if (u.scheme !== b.scheme || u.host !== b.host || u.port !== b.port) return { ok: false, error: connectionErrorMessage(u), url: u.url };
    // The servlet container collapses repeated slashes ("fhir//Patient" is "fhir/Patient").
    const path = u.path.replace(/\/{2,}/g, "/");
    const root = b.path.slice(0, -1);
    if (path !== root && !path.startsWith(b.path)) return { ok: false, error: httpErrorMessage(404, u.url), url: u.url, status: 404 };
    const rel = path.slice(Math.min(path.length, b.path.length));
    return { ok: true, path: u.query ? `${rel}?${u.query}` : rel, url: u.url };
  }
}
