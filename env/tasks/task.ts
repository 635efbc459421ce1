import { z } from "zod";

export const Suite = z.enum(["mab-v1", "mab-v2", "workflows"]);
export type Suite = z.infer<typeof Suite>;

/** Task types: "task1".."task10" in both MedAgentBench suites, plus "v2_task5" | "v2_task9" | "v2_task10" in
 *  mab-v2; "review" (one patient's chart review) in workflows. */
export const TaskType = z.string().regex(/^((v2_)?task\d+|review)$/, "a task type like task5, v2_task9 or review");

export const Task = z.object({
  id: z.string().min(1),
  suite: Suite,
  type: TaskType,
  instruction: z.string(),
  context: z.string().default(""),
  /** The patient the task is about (absent for "Patient not found" lookups). */
  eval_MRN: z.string().optional(),
  /** Gold answer when the task file carries one (mab-v1 task1). */
  sol: z.array(z.unknown()).optional(),
  /** The task's "now" (ISO instant with offset). */
  clock: z.string().optional(),
  /** The grading branch the task exercises on the data it was generated for (generated tasks). */
  branch: z.string().optional(),
  /** workflows: the rules the review asks for, one checkpoint each, in the order asked. */
  rules: z.array(z.string().min(1)).min(1).optional(),
  /** The task's own round limit (stated in its first message); it wins over the run's default. */
  max_rounds: z.number().int().min(1).max(10_000).optional(),
});
export type Task = z.infer<typeof Task>;
export type TaskInput = z.input<typeof Task>;
