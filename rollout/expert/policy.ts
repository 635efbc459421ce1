// The scripted expert: (task, messages so far) -> next agent turn, in either protocol.
import type { AgentTurn, Message, Policy, PolicyInput } from "../../env/core/index.ts";
import type { Task } from "../../env/tasks/index.ts";
import { ExpertError, nextRequests, type Plan } from "./plan.ts";
import { V1_PLANS } from "./plans-v1.ts";
import { V2_PLANS } from "./plans-v2.ts";
import { apiBaseFromPrompt, renderText, textReplies } from "./text.ts";
import { countToolCalls, localFilter, searchableWith, toolCall, toolReplies } from "./tools.ts";

export interface ExpertOptions {
  /** FHIR base URL with a trailing slash; read from the prompt when absent. */
  apiBase?: string;
  /** The episode's round limit (optional extra orders are capped to fit it). Default 8. */
  maxRounds?: number;
}

export function planFor(task: Task): Plan {
  const plan = (task.suite === "mab-v1" ? V1_PLANS : V2_PLANS)[task.type];
  if (!plan) throw new ExpertError(`no expert plan for ${task.suite} ${task.type}`);
  return plan;
}

/** The expert's next turn as text (text protocol) or an assistant message with tool calls. */
export function expertTurn(input: PolicyInput, options: ExpertOptions = {}): AgentTurn {
  const plan = planFor(input.task);
  const maxRounds = options.maxRounds ?? 8;
  if (input.protocol === "text") {
    const apiBase = options.apiBase ?? apiBaseFromPrompt(input.messages) ?? "http://localhost:8080/fhir/";
    const [request] = nextRequests(plan, input.task, textReplies(input.messages), { batchWrites: false, canPage: true, maxRounds });
    return renderText(request!, apiBase);
  }
  const requests = nextRequests(plan, input.task, toolReplies(input.messages), {
    batchWrites: true,
    canPage: false,
    maxRounds,
    searchable: searchableWith(input.tools),
    localFilter,
  });
  const first = countToolCalls(input.messages);
  const patientSearch = offersName(input.tools, "fhir_patient_search") && !offersName(input.tools, "patient_search") ? "fhir_patient_search" : "patient_search";
  const message: Message = {
    role: "assistant",
    content: null,
    tool_calls: requests.map((r, i) => toolCall(r, `call_${first + i + 1}`, patientSearch)),
  };
  return message;
}

export function createExpertPolicy(options: ExpertOptions = {}): Policy {
  return {
    name: "expert",
    info: { kind: "expert", model: "expert" },
    act: async (input) => expertTurn(input, options),
  };
}

const offersName = (tools: unknown[] | undefined, name: string): boolean =>
  tools?.some((t) => (t as { function?: { name?: unknown } })?.function?.name === name) ?? false;
