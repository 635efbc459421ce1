// The scripted expert: (task, messages so far) -> next agent turn, in either protocol.
import { DEFAULT_API_BASE, type AgentTurn, type Message, type Policy, type PolicyInput } from "../../env/core/index.ts";
import type { Protocol } from "../../env/protocol/index.ts";
import type { Task } from "../../env/tasks/index.ts";
import { ExpertError, nextRequests, type Plan, type Reply } from "./plan.ts";
import { V1_PLANS } from "./plans-v1.ts";
import { V2_PLANS } from "./plans-v2.ts";
import { reviewPlan } from "./plans-workflows.ts";
import { apiBaseFromPrompt, parseTextReply, renderText } from "./text.ts";
import { batchesWrites, calculatorOffered, countToolCalls, localFilter, parseToolReply, searchableWith, toolCall } from "./tools.ts";

export interface ExpertOptions {
  /** FHIR base URL with a trailing slash; read from the prompt when absent. */
  apiBase?: string;
  /** The episode's round limit (optional extra orders are capped to fit it). Default 8. */
  maxRounds?: number;
}

export function planFor(task: Task): Plan {
  if (task.suite === "workflows") return reviewPlan;
  const plan = (task.suite === "mab-v1" ? V1_PLANS : V2_PLANS)[task.type];
  if (!plan) throw new ExpertError(`no expert plan for ${task.suite} ${task.type}`);
  return plan;
}

/** The messages carrying the environment's replies to each request, in request order (undefined: not answered). */
export function replyMessages(messages: readonly Message[], protocol: Protocol): (Message | undefined)[] {
  const out: (Message | undefined)[] = [];
  const byCall = new Map<string, Message>();
  for (const m of messages) if (m.role === "tool" && m.tool_call_id) byCall.set(m.tool_call_id, m);
  messages.forEach((m, i) => {
    if (m.role !== "assistant") return;
    const next = messages[i + 1];
    if (protocol === "text") out.push(next?.role === "user" ? next : undefined);
    else for (const c of m.tool_calls ?? []) if (c.function.name !== "finish") out.push(byCall.get(c.id));
  });
  return out;
}

export const parseReply = (m: Message, protocol: Protocol): Reply => (protocol === "text" ? parseTextReply : parseToolReply)(m.content ?? "");

/** The expert's next turn as text (text protocol) or an assistant message with tool calls. */
export function expertTurn(input: PolicyInput, options: ExpertOptions = {}): AgentTurn {
  const plan = planFor(input.task);
  const maxRounds = input.task.max_rounds ?? options.maxRounds ?? 8;
  const replies = replyMessages(input.messages, input.protocol).flatMap((m) => (m ? [parseReply(m, input.protocol)] : []));
  if (input.protocol === "text") {
    const apiBase = options.apiBase ?? apiBaseFromPrompt(input.messages) ?? DEFAULT_API_BASE;
    const [request] = nextRequests(plan, input.task, replies, { batchWrites: false, canPage: true, maxRounds });
    return renderText(request!, apiBase);
  }
  const requests = nextRequests(plan, input.task, replies, {
    batchWrites: batchesWrites(input.tools),
    canPage: false,
    maxRounds,
    searchable: searchableWith(input.tools),
    canCalculate: calculatorOffered(input.tools),
    localFilter,
  });
  const first = countToolCalls(input.messages);
  return {
    role: "assistant",
    content: null,
    tool_calls: requests.map((r, i) => toolCall(r, `call_${first + i + 1}`, input.tools)),
  };
}

export function createExpertPolicy(options: ExpertOptions = {}): Policy {
  return {
    name: "expert",
    info: { kind: "expert", model: "expert" },
    act: async (input) => expertTurn(input, options),
  };
}
