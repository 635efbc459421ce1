// Format dpo: TRL's conversational preference rows (`prompt`, `chosen`, `rejected`, plus `tools`),
// one per pair of a correct and a failed trajectory of the same task prompt (preference.ts pairs them).
import { z } from "zod";
import { toolCallProblems } from "./checks.ts";
import { firstAssistant, pairId, PreferenceMessages as Messages, sharedPrompt, TaskColumns, taskColumns, upToLastAssistant } from "./preference.ts";
import { jsonValue, TrlRow, TrlTool } from "./schema.ts";

export const DpoRow = z.strictObject({
  /** The messages both trajectories share, up to the first assistant turn where they part. */
  prompt: Messages,
  /** From there to the correct trajectory's last assistant turn (environment replies between its turns included). */
  chosen: Messages,
  /** The same for the failed trajectory. */
  rejected: Messages,
  tools: jsonValue(z.array(TrlTool)).nullable(),
  id: z.string().regex(/^[0-9a-f]{24}$/, "24 hex digits"),
  /** The two episodes' ids (the `id` of their SFT rows). */
  chosen_id: z.string().regex(/^[0-9a-f]{24}$/, "24 hex digits"),
  rejected_id: z.string().regex(/^[0-9a-f]{24}$/, "24 hex digits"),
  ...TaskColumns,
  chosen_model: TrlRow.shape.model,
  rejected_model: TrlRow.shape.model,
  /** How the failed episode ended (completed with a wrong answer, invalid_action, limit_reached, ...). */
  rejected_status: TrlRow.shape.status,
});
export type DpoRow = z.infer<typeof DpoRow>;

export function toDpoRow(chosen: TrlRow, rejected: TrlRow): DpoRow {
  const c = upToLastAssistant(chosen.messages);
  const r = upToLastAssistant(rejected.messages);
  const k = sharedPrompt(c, r);
  return {
    prompt: c.slice(0, k),
    chosen: c.slice(k),
    rejected: r.slice(k),
    tools: chosen.tools,
    id: pairId(chosen.id, rejected.id),
    chosen_id: chosen.id,
    rejected_id: rejected.id,
    ...taskColumns(chosen),
    chosen_model: chosen.model,
    rejected_model: rejected.model,
    rejected_status: rejected.status,
  };
}

/** Problems of a dpo row beyond its schema: the prompt ends where the model speaks, both completions are the model's turns and the replies to them. */
export function dpoRowProblems(row: DpoRow): string[] {
  const problems: string[] = [];
  if (firstAssistant(row.prompt) === 0) problems.push("prompt starts with an assistant turn");
  for (const side of ["chosen", "rejected"] as const) {
    const m = row[side];
    if (m[0]!.role !== "assistant") problems.push(`${side} does not start with an assistant turn`);
    if (m[m.length - 1]!.role !== "assistant") problems.push(`${side} does not end on an assistant turn`);
    for (const p of toolCallProblems([...row.prompt, ...m])) problems.push(`${side}: ${p}`);
  }
  if (JSON.stringify(row.chosen) === JSON.stringify(row.rejected)) problems.push("chosen and rejected are the same");
  return problems;
}
