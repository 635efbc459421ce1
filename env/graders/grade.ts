// Grader dispatch: one grader per suite/type; text-protocol episodes are graded only when completed,
// tool-protocol runs always (as MedAgentBench V2 does); `medarc` runs as the verifiers port grades them.
import * as py from "../python/index.ts";
import { type Suite } from "../tasks/index.ts";
import { Checks } from "./checks.ts";
import { MAB_V1 } from "./mab-v1.ts";
import { MAB_V2 } from "./mab-v2.ts";
import { MAB_V2_RELAXED } from "./mab-v2-relaxed.ts";
import type { GradeInput, GradeResult, Grader } from "./types.ts";
import { gradeWorkflow } from "./workflows.ts";

type Impl = (c: Checks, input: GradeInput) => boolean;

const IMPLS: Record<Suite, Record<string, Impl>> = {
  "mab-v1": MAB_V1,
  "mab-v2": { ...MAB_V2, ...MAB_V2_RELAXED },
  workflows: {},
};

export function gradedTypes(suite: Suite): string[] {
  return Object.keys(IMPLS[suite]);
}

function wrap(suite: Suite, type: string, impl: Impl): Grader {
  return (input: GradeInput): GradeResult => {
    const c = new Checks();
    if (input.protocol === "text" && input.status !== "completed") {
      c.add("completed", false, `episode ended with status "${input.status}"; only episodes that reached FINISH are graded`);
      return c.result(false);
    }
    try {
      return c.result(impl(c, input));
    } catch (e) {
      if (!(e instanceof py.PyError)) throw e;
      // The official evaluation wrapper turns any exception of a grader into False.
      c.add("grader exception", false, `the official ${suite}/${type} grader raises here: ${e.message}`);
      return c.result(false);
    }
  };
}

const cache = new Map<string, Grader>();

/** The grader of a suite/type; throws for an unknown type. */
export function graderFor(suite: Suite, type: string): Grader {
  const key = `${suite}/${type}`;
  let g = cache.get(key);
  if (!g) {
    const impl = IMPLS[suite]?.[type];
    if (!impl) throw new Error(`no grader for ${key} (known: ${gradedTypes(suite).join(", ")})`);
    g = wrap(suite, type, impl);
    cache.set(key, g);
  }
  return g;
}

/** Grade one finished episode against the base data. */
export function grade(input: GradeInput): GradeResult {
  if (input.task.suite === "workflows") return gradeWorkflow(input);
  if (input.protocol === "tools" && input.v2Semantics === "medarc") return medarcGrade(input);
  return graderFor(input.task.suite, input.task.type)(input);
}

/** The verifiers port grades every task with new_refsol's `task<N>` for the number its id starts with
 *  (`int(id.split("_")[0][4:])`): a v1-style task gets the V2 grader of its number, and a `v2_task<N>`
 *  id raises there (scored 0). ehrgym takes the number from the task's type (its generated ids differ). */
function medarcGrade(input: GradeInput): GradeResult {
  const n = /^task(\d+)$/.exec(input.task.type)?.[1];
  const type = n === undefined ? undefined : `task${Number(n)}`;
  if (type === undefined || !MAB_V2[type]) {
    const c = new Checks();
    c.add("category", false, `the port takes the grader from the "task<N>" an id starts with; a ${input.task.type} task has none it can grade, so it scores 0`);
    return c.result(false);
  }
  return graderFor("mab-v2", type)(input);
}
