// The expert's requests as text-protocol turns, and the environment's text replies as Replies.
import type { Message } from "../../env/core/index.ts";
import type { Reply, Request } from "./plan.ts";

const GET_REPLY = "Here is the response from the GET request:\n";
const GET_TAIL = ". Please call FINISH if you have got answers";

const encode = (v: string) => encodeURIComponent(v).replace(/%2C/gi, ",").replace(/%3A/gi, ":").replace(/%7C/gi, "|");

export function renderText(request: Request, apiBase: string): string {
  switch (request.kind) {
    case "GET":
      return `GET ${request.url ?? `${apiBase}${request.resourceType}?${request.params.map(([k, v]) => `${k}=${encode(v)}`).join("&")}`}`;
    case "POST":
      return `POST ${apiBase}${request.resourceType}\n${JSON.stringify(request.body)}`;
    case "FINISH":
      return `FINISH(${JSON.stringify(reportOnly(request.answer) ?? request.answer)})`;
    case "CALC":
      throw new Error("the text protocol has no calculator");
  }
}

/** A workflows report: an answer that is one JSON object is written as that object. */
export function reportOnly(answer: readonly unknown[]): Record<string, unknown> | undefined {
  const [only] = answer;
  return answer.length === 1 && only && typeof only === "object" && !Array.isArray(only) ? (only as Record<string, unknown>) : undefined;
}

/** The reply a text-protocol user message carries. */
export function parseTextReply(text: string): Reply {
  if (text.startsWith(GET_REPLY)) {
    const tail = text.lastIndexOf(GET_TAIL);
    const end = tail < 0 ? text.length : tail;
    try {
      return { ok: true, json: JSON.parse(text.slice(GET_REPLY.length, end)) };
    } catch {
      return { ok: false, error: "GET reply is not JSON" };
    }
  }
  if (text.startsWith("POST request accepted")) return { ok: true, json: null };
  return { ok: false, error: text.slice(0, 300) };
}

/** The FHIR base the prompt tells the agent to use (e.g. http://localhost:8080/fhir/). */
export function apiBaseFromPrompt(messages: readonly Message[]): string | undefined {
  for (const m of messages) {
    const hit = /(https?:\/\/[^\s"'`]+?\/fhir\/)/.exec(m.content ?? "");
    if (hit?.[1]) return hit[1];
  }
  return undefined;
}
