import { z } from "zod";

export const Suite = z.enum(["mab-v1", "mab-v2"]);
export type Suite = z.infer<typeof Suite>;

/** Task types: "task1".."task10" in both suites, plus "v2_task5" | "v2_task9" | "v2_task10" in mab-v2. */
export const TaskType = z.string().regex(/^(v2_)?task\d+$/, "a task type like task5 or v2_task9");

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
});
export type Task = z.infer<typeof Task>;
export type TaskInput = z.input<typeof Task>;
