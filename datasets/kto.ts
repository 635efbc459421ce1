// Format kto: TRL's unpaired preference rows (`prompt`, `completion`, boolean `label`, plus `tools`):
// correct trajectories labelled true, failed ones of the same task prompts labelled false.
import { z } from "zod";
import { toolCallProblems } from "./checks.ts";
import { firstAssistant, PreferenceMessages as Messages, TaskColumns, taskColumns, upToLastAssistant } from "./preference.ts";
import { jsonValue, TrlRow, TrlTool } from "./schema.ts";

export const KtoRow = z.strictObject({
  /** The messages before the first assistant turn. */
  prompt: Messages,
  /** From the first to the last assistant turn (environment replies between them included). */
  completion: Messages,
  /** Whether the completion is desirable: the grader's reward 1. */
  label: z.boolean(),
  tools: jsonValue(z.array(TrlTool)).nullable(),
  /** The episode's id (the `id` of its SFT row). */
  id: TrlRow.shape.id,
  ...TaskColumns,
  model: TrlRow.shape.model,
  reward: TrlRow.shape.reward,
  status: TrlRow.shape.status,
});
export type KtoRow = z.infer<typeof KtoRow>;

export function toKtoRow(row: TrlRow, label: boolean): KtoRow {
  const messages = upToLastAssistant(row.messages);
  const k = firstAssistant(messages);
  return {
    prompt: messages.slice(0, k),
    completion: messages.slice(k),
    label,
    tools: row.tools,
    id: row.id,
    ...taskColumns(row),
    model: row.model,
    reward: row.reward,
    status: row.status,
  };
}

export function ktoRowProblems(row: KtoRow): string[] {
  const problems: string[] = [];
  if (firstAssistant(row.prompt) !== -1) problems.push("prompt holds an assistant turn");
  const m = row.completion;
  if (m[0]!.role !== "assistant") problems.push("completion does not start with an assistant turn");
  if (m[m.length - 1]!.role !== "assistant") problems.push("completion does not end on an assistant turn");
  problems.push(...toolCallProblems([...row.prompt, ...m]));
  if (row.label !== (row.reward === 1)) problems.push(`label ${row.label} but reward ${row.reward}`);
  return problems;
}
