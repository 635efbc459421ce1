// The graders' input of the tool protocol: the agent items MedAgentBench V2's wrapper builds from a
// run (`_to_task_result`), or the ones the verifiers port builds from the chat (`--v2-semantics medarc`).
// The official substring rules (has POST, accepted POSTs) then read these items (env/graders/posts.ts).
import * as py from "../python/index.ts";
import type { Action } from "./action.ts";
import { apiMapping, type V2Semantics } from "./tools.ts";

/** One step of a run as the original agent loop yields it. */
export type TraceStep =
  | { type: "message"; content: string }
  /** `arguments`: the call's argument text as the model sent it (json.loads of it is what gets logged). */
  | { type: "tool_call"; name: string; arguments: string; callId: string }
  | { type: "tool_output"; callId: string };

/** Python's str() of json.loads(text); `{}` when it does not parse (the port's fallback). */
function argsStr(text: string): string {
  return py.pyStr(loadArgs(text));
}

function loadArgs(text: string): py.Py {
  try {
    const v = py.jsonLoads(text);
    return typeof v === "string" ? py.jsonLoads(v) : v;
  } catch {
    return new py.PyDict();
  }
}

function callItem(name: string, argumentsText: string, apiBase: string, semantics: V2Semantics): string {
  const api = apiMapping(name, semantics);
  if (!api) return `${name}(${argsStr(argumentsText)})`;
  return `${api.method} ${apiBase}${api.type}\n${py.jsonDumps(loadArgs(argumentsText))}`;
}

/** `_to_task_result`'s history: messages as they are; a mapped tool call as `METHOD url` + its arguments'
 *  json.dumps; any other call as `name(args)`; a mapped call's output as `METHOD request accepted`. */
export function originalHistory(trace: readonly TraceStep[], apiBase: string): string[] {
  const items: string[] = [];
  const mapped = new Map<string, string>();
  for (const step of trace) {
    if (step.type === "message") items.push(step.content);
    else if (step.type === "tool_call") {
      items.push(callItem(step.name, step.arguments, apiBase, "original"));
      const api = apiMapping(step.name, "original");
      if (api) mapped.set(step.callId, api.method);
    } else {
      const method = mapped.get(step.callId);
      if (method) items.push(`${method} request accepted`);
    }
  }
  return items;
}

interface ChatMessage {
  role: string;
  content: string | null;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/** The verifiers port's `build_task_result` over the completion: per assistant message its text, then
 *  every call of the turn; each tool message of a mapped call adds `METHOD request accepted` after them. */
export function medarcHistory(completion: readonly ChatMessage[], apiBase: string): string[] {
  const items: string[] = [];
  const names = new Map<string, string>();
  for (const m of completion) {
    if (m.role === "assistant") {
      if (m.content) items.push(m.content);
      for (const call of m.tool_calls ?? []) {
        items.push(callItem(call.function.name, call.function.arguments, apiBase, "medarc"));
        if (call.id) names.set(call.id, call.function.name);
      }
    } else if (m.role === "tool") {
      const name = names.get(m.tool_call_id ?? "");
      const api = name === undefined ? undefined : apiMapping(name, "medarc");
      if (api) items.push(`${api.method} request accepted`);
    }
  }
  return items;
}

/** History items as the canonical log the graders read: every item is an agent item whose "reply" is the
 *  next item (extract_posts tests `history[idx+1]`; the last item has none). */
export function historyActions(items: readonly string[]): Action[] {
  return items.map((raw, i) => {
    const kind = raw.startsWith("GET ") ? "GET" : raw.startsWith("POST ") ? "POST" : "INVALID";
    return i + 1 < items.length ? { kind, raw, reply: items[i + 1]! } : { kind, raw };
  });
}
