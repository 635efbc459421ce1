// `like` mode: templates derived from an official task file by turning its slots (MRN, name, DOB,
// measured BP, SBAR text, clock) into placeholders, so generated tasks read exactly like it.
import type { Task } from "../task.ts";
import type { Template } from "./wording.ts";

const ISO = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?[+-]\d{2}:\d{2}/g;

function templateOf(task: Task): Template | undefined {
  let { instruction, context } = task;
  if (task.eval_MRN) {
    instruction = instruction.split(task.eval_MRN).join("{{mrn}}");
    context = context.split(task.eval_MRN).join("{{mrn}}");
  }
  instruction = instruction.replace(ISO, "{{clock}}");
  context = context.replace(ISO, "{{clock}}");
  if (task.suite === "mab-v1" && task.type === "task1") {
    const m = /name (.+?) and DOB of (\d{4}-\d{2}-\d{2})/.exec(instruction);
    if (!m) return undefined;
    instruction = instruction.replace(m[0], m[0].replace(m[1]!, "{{name}}").replace(m[2]!, "{{dob}}"));
  }
  if (task.suite === "mab-v1" && task.type === "task3") {
    if (!/\d{2,3}\/\d{2,3}\s*mmHg/.test(instruction)) return undefined;
    instruction = instruction.replace(/\d{2,3}\/\d{2,3}\s*mmHg/, "{{bp}}");
  }
  if (task.suite === "mab-v1" && task.type === "task8") {
    const a = instruction.indexOf('"');
    const b = instruction.lastIndexOf('"');
    if (a < 0 || b <= a) return undefined;
    instruction = `${instruction.slice(0, a + 1)}{{sbar}}${instruction.slice(b)}`;
  }
  if (task.type !== "task1" && task.suite === "mab-v1" && !instruction.includes("{{mrn}}")) return undefined;
  if (task.suite === "mab-v2" && !instruction.includes("{{mrn}}")) return undefined;
  return { instruction, context };
}

/** Templates per suite/type ("mab-v1/task5" -> distinct templates in file order). */
export function likeTemplates(tasks: readonly Task[]): Map<string, Template[]> {
  const out = new Map<string, Template[]>();
  const seen = new Set<string>();
  for (const t of tasks) {
    const tpl = templateOf(t);
    if (!tpl) continue;
    const key = `${t.suite}/${t.type}`;
    const sig = `${key}\u0000${tpl.instruction}\u0000${tpl.context}`;
    if (seen.has(sig)) continue;
    seen.add(sig);
    out.set(key, [...(out.get(key) ?? []), tpl]);
  }
  return out;
}
