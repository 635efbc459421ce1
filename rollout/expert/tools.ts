// The expert's requests as tool calls (PROTOCOL.md section 2), and tool messages as Replies.
import type { Message, ToolCall } from "../../env/core/index.ts";
import type { Reply, Request } from "./plan.ts";

const SEARCH_TOOLS: Record<string, string> = {
  Patient: "fhir_patient_search",
  Observation: "fhir_observation_search",
  Condition: "fhir_condition_search",
  Procedure: "fhir_procedure_search",
  MedicationRequest: "fhir_medication_request_search",
  // Not in every tool set: used only when the environment offers it (see searchableWith).
  ServiceRequest: "fhir_service_request_search",
};
const CREATE_TOOLS: Record<string, string> = {
  Observation: "fhir_vitals_create",
  MedicationRequest: "fhir_medication_request_create",
  ServiceRequest: "fhir_service_request_create",
};

/** Resource types the offered tools can search (all known search tools when the list is not given). */
export function searchableWith(tools: unknown[] | undefined): ReadonlySet<string> {
  const offered = tools?.map((t) => (t as { function?: { name?: unknown } })?.function?.name).filter((n): n is string => typeof n === "string");
  const names = offered ? new Set(offered) : new Set(Object.values(SEARCH_TOOLS).filter((n) => n !== SEARCH_TOOLS.ServiceRequest));
  return new Set(Object.entries(SEARCH_TOOLS).flatMap(([type, name]) => (names.has(name) ? [type] : [])));
}

/** Search parameters the tools take (the server's own `_count` is not a tool argument). */
const TOOL_PARAMS = new Set(["family", "given", "birthdate", "identifier", "patient", "code", "date", "category", "status"]);

export function toolCall(request: Request, id: string): ToolCall {
  switch (request.kind) {
    case "GET": {
      const name = SEARCH_TOOLS[request.resourceType];
      if (!name || request.url) throw new Error(`the tool protocol cannot search ${request.resourceType}`);
      const args = Object.fromEntries(request.params.filter(([k]) => TOOL_PARAMS.has(k)));
      return { id, type: "function", function: { name, arguments: JSON.stringify(args) } };
    }
    case "POST": {
      const name = CREATE_TOOLS[request.resourceType];
      if (!name) throw new Error(`the tool protocol cannot create ${request.resourceType}`);
      return { id, type: "function", function: { name, arguments: JSON.stringify(request.body) } };
    }
    case "FINISH":
      return { id, type: "function", function: { name: "finish", arguments: JSON.stringify({ value: request.answer }) } };
  }
}

/** The reply a tool message carries. */
export function parseToolReply(content: string): Reply {
  if (content.startsWith("Error")) return { ok: false, error: content.slice(0, 300) };
  try {
    return { ok: true, json: JSON.parse(content) };
  } catch {
    return { ok: true, json: content };
  }
}

/** Replies to every tool call made so far, in call order (matched by tool_call_id). */
export function toolReplies(messages: Message[]): Reply[] {
  const byCall = new Map<string, string>();
  for (const m of messages) if (m.role === "tool" && m.tool_call_id) byCall.set(m.tool_call_id, m.content ?? "");
  const replies: Reply[] = [];
  for (const m of messages) {
    if (m.role !== "assistant") continue;
    for (const call of m.tool_calls ?? []) {
      if (call.function.name === "finish") continue;
      const content = byCall.get(call.id);
      if (content !== undefined) replies.push(parseToolReply(content));
    }
  }
  return replies;
}

export function countToolCalls(messages: Message[]): number {
  return messages.reduce((n, m) => n + (m.role === "assistant" ? (m.tool_calls?.length ?? 0) : 0), 0);
}
