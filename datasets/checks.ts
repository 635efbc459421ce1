// Checks of one dataset row beyond its schema, shared by validate and the tests' expectations.
import type { TrlRow } from "./schema.ts";

/** Every tool reply answers an earlier tool call of the same conversation, and every call gets one reply. */
export function toolCallProblems(row: TrlRow): string[] {
  const open = new Set<string>();
  const problems: string[] = [];
  for (const [i, m] of row.messages.entries()) {
    if (m.role === "assistant") for (const c of m.tool_calls ?? []) open.add(c.id);
    if (m.role === "tool") {
      if (!m.tool_call_id) problems.push(`messages[${i}]: tool reply without tool_call_id`);
      else if (!open.delete(m.tool_call_id)) problems.push(`messages[${i}]: tool reply to unknown call ${m.tool_call_id}`);
    }
  }
  // the last turn may end the episode with calls the environment did not answer (finish)
  const last = [...row.messages].reverse().find((m) => m.role === "assistant");
  const unansweredEarlier = [...open].filter((id) => !(last?.tool_calls ?? []).some((c) => c.id === id));
  for (const id of unansweredEarlier) problems.push(`tool call ${id} has no reply`);
  return problems;
}
