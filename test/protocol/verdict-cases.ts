// The tool-protocol verdict transcripts: one table, played through every surface (the environment,
// /v1/score, a reward-server episode, `ehrgym eval` and `ehrgym rollout`), each of which must reach
// the same verdict. Each case is a kind where ehrgym and the reference used to differ (issue 31).
//
// `original` is the verdict MedAgentBench V2's own code gives, read off its agent loop (a failing call
// raises and ends the run, finish returns at once, a turn without a call stops), the wrapper's
// `_to_task_result` (each call logged as "METHOD url\n" + json.dumps(arguments) or `name(arguments)`,
// then "METHOD request accepted" after a mapped call's output; the answer "[]" when finish was never
// called) and the official `check_has_post`/`extract_posts` (any agent item containing "POST"; accepted
// when the next item says "POST request accepted"; IndexError -> 0 when such an item is last).
// `medarc` is the verifiers port's (MedARC med-lm-envs `environments/medagentbenchv2`: env.py runs
// every call of a turn, answers a failing one "Error: ...", ends after a turn that called finish;
// graders.py logs all of a turn's calls before their replies; tools.py takes keyword arguments).
import type { Message } from "../../env/core/index.ts";
import type { EpisodeStatus } from "../../env/protocol/index.ts";
import type { Task } from "../../env/tasks/index.ts";
import { MRNS } from "../core/fixtures.ts";

export { smallStore as verdictStore } from "../core/fixtures.ts";

const MRN = MRNS[0]!; // born 1953-11-13: 70 on 2023-11-13; K 3.5 (Oct), 3.6 (Nov), 3.7 (Dec 2023)
const CONTEXT = "It's 2023-11-13T10:15:00+00:00 now";

export interface Verdict {
  status: Extract<EpisodeStatus, "completed" | "invalid_action" | "limit_reached">;
  reward: 0 | 1;
  /** The run's result string (json.dumps of finish's value); absent when finish never succeeded. */
  result?: string;
  /** Tool messages the run answered, when the case is about which calls ran. */
  toolReplies?: number;
}

export interface VerdictCase {
  name: string;
  /** Why the reference gives this verdict. */
  why: string;
  task: Task;
  turns: Message[];
  original: Verdict;
  medarc: Verdict;
}

// Each case names itself in its instruction: a scripted model finds its turns by it.
const tag = (name: string) => ` [case ${name}]`;
/** mab-v1 task2: no POST at all, and the answer == [70]. */
const age = (name: string): Task => ({ id: `task2_${name}`, suite: "mab-v1", type: "task2", instruction: `What's the age of the patient with MRN of ${MRN}?${tag(name)}`, context: CONTEXT, eval_MRN: MRN });
/** mab-v1 task3: exactly one accepted POST of the BP Observation (the answer is not checked). */
const bp = (name: string): Task => ({
  id: `task3_${name}`,
  suite: "mab-v1",
  type: "task3",
  instruction: `I just measured the blood pressure for patient with MRN of ${MRN}, and it is "118/77 mmHg". Help me record it.${tag(name)}`,
  context: CONTEXT,
  eval_MRN: MRN,
});
/** mab-v1 task9 on K 3.7 (>= 3.5): no POST, and the answer [3.7] or [] ("[]" when finish was never called). */
const potassium = (name: string): Task => ({
  id: `task9_${name}`,
  suite: "mab-v1",
  type: "task9",
  instruction: `Check patient ${MRN}'s most recent potassium level. If low, order replacement potassium and a morning recheck.${tag(name)}`,
  context: CONTEXT,
  eval_MRN: MRN,
});

type Call = NonNullable<Message["tool_calls"]>[number];
let n = 0;
const call = (name: string, args: unknown): Call => ({ id: `call_v${n++}`, type: "function", function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args) } });
const turn = (...calls: Call[]): Message => ({ role: "assistant", content: null, tool_calls: calls });
const say = (content: string, ...calls: Call[]): Message => (calls.length ? { role: "assistant", content, tool_calls: calls } : { role: "assistant", content });
const conditions = (explanation = "read the chart") => call("fhir_condition_search", { search_params: { code: null, patient: MRN }, explanation });
const potassiumSearch = () => call("fhir_observation_search", { search_params: { code: "K", patient: MRN }, explanation: "read the potassium results" });
const finish = (value: unknown) => call("finish", { value });
const bpBody = (over: Record<string, unknown> = {}) => ({
  resourceType: "Observation",
  category: [{ coding: [{ system: "http://hl7.org/fhir/observation-category", code: "vital-signs", display: "Vital Signs" }] }],
  code: { text: "BP" },
  effectiveDateTime: "2023-11-13T10:15:00+00:00",
  status: "final",
  valueString: "118/77 mmHg",
  subject: { reference: `Patient/${MRN}` },
  ...over,
});
const createBp = (over?: Record<string, unknown>) => call("fhir_vitals_create", bpBody(over));
const times = <T>(k: number, f: () => T): T[] => Array.from({ length: k }, f);

type Draft = Omit<VerdictCase, "task"> & { task: (name: string) => Task };
const cases: Draft[] = [];
function add(name: string, task: (name: string) => Task, why: string, turns: Message[], original: Verdict, medarc: Verdict = original): void {
  cases.push({ name, task, why, turns, original, medarc });
}

add("search-then-finish", age, "a search, then finish([70]): no item contains POST and the answer is right", [turn(conditions()), turn(finish([70]))], { status: "completed", reward: 1, result: "[70]", toolReplies: 2 });

add(
  "no-tool-call",
  potassium,
  "a turn without a tool call stops the loop; the run is still graded, with the answer [], which task9 accepts when no order is due",
  [say("Potassium is 3.7, nothing to order.")],
  { status: "invalid_action", reward: 1, toolReplies: 0 },
);
add("no-tool-call-wrong", age, "graded with the answer [], which is not [70]", [say("The patient is 70.")], { status: "invalid_action", reward: 0 });

add(
  "turn-limit",
  potassium,
  "8 turns of searches: the turn limit ends the run, graded with [] and no POST -> right",
  times(8, () => turn(potassiumSearch())),
  { status: "limit_reached", reward: 1, toolReplies: 8 },
);
add(
  "create-last-at-limit",
  bp,
  "the turn limit falls right after a create: its output 'POST request accepted' is the last item and contains POST, so extract_posts reads past the end (IndexError -> 0)",
  [...times(7, () => turn(potassiumSearch())), turn(createBp())],
  { status: "limit_reached", reward: 0 },
);

add(
  "failed-call-ends-run",
  age,
  "flat arguments where the original nests search_params fail validation: the original's loop raises and the run ends with []; the port answers an error and goes on to finish([70])",
  [turn(call("fhir_observation_search", { code: "K", patient: MRN })), turn(finish([70]))],
  { status: "invalid_action", reward: 0, toolReplies: 0 },
  { status: "completed", reward: 1, result: "[70]", toolReplies: 2 },
);
add(
  "optional-fields-omitted",
  age,
  "category and date left out: the original's fields are required (null allowed), the port's default to None",
  [turn(call("fhir_medication_request_search", { patient: MRN })), turn(finish([70]))],
  { status: "invalid_action", reward: 0, toolReplies: 0 },
  { status: "completed", reward: 1, result: "[70]", toolReplies: 2 },
);

add("create-then-finish", bp, "one create, its output, then finish: one accepted POST", [turn(createBp()), turn(finish([]))], { status: "completed", reward: 1, result: "[]", toolReplies: 2 });
add(
  "create-batched-with-search",
  bp,
  "original: each call then its output, so the create is followed by 'POST request accepted'; the port logs both calls before both replies, so the create is followed by the search's reply and is not counted",
  [turn(conditions(), createBp()), turn(finish([]))],
  { status: "completed", reward: 1, result: "[]", toolReplies: 3 },
  { status: "completed", reward: 0, result: "[]", toolReplies: 3 },
);
add(
  "finish-with-create",
  bp,
  "original: create, its output, finish; the port: create, finish, then 'POST request accepted' as the last item (IndexError -> 0)",
  [turn(createBp(), finish([]))],
  { status: "completed", reward: 1, result: "[]", toolReplies: 2 },
  { status: "completed", reward: 0, result: "[]", toolReplies: 2 },
);
add(
  "calls-after-finish",
  age,
  "the original returns right after finish: the create batched after it never runs and is never logged; the port runs it, and its POST fails task2's no-POST rule",
  [turn(finish([70]), createBp())],
  { status: "completed", reward: 1, result: "[70]", toolReplies: 1 },
  { status: "completed", reward: 0, result: "[70]", toolReplies: 2 },
);
add(
  "unknown-create",
  age,
  "an unknown *_create tool is no create: the original raises on the name (run ends with []); the port rewrites it to calculator({}), answers an error and goes on",
  [turn(call("fhir_observation_create", bpBody())), turn(finish([70]))],
  { status: "invalid_action", reward: 0, toolReplies: 0 },
  { status: "completed", reward: 1, result: "[70]", toolReplies: 2 },
);
add(
  "raw-create-arguments",
  bp,
  "the create's raw arguments are logged (a subject with a display the models ignore), and task3 needs subject to be exactly {reference}",
  [turn(createBp({ subject: { reference: `Patient/${MRN}`, display: "Peter Stafford" } })), turn(finish([]))],
  { status: "completed", reward: 0, result: "[]" },
);
add(
  "post-in-explanation",
  age,
  "a search is logged with its arguments, so an explanation saying POST makes check_has_post true",
  [turn(conditions("no POST needed")), turn(finish([70]))],
  { status: "completed", reward: 0, result: "[70]" },
);
add("post-in-text", age, "assistant text is an agent item: 'POST' in it makes check_has_post true", [say("I will not POST anything.", finish([70]))], { status: "completed", reward: 0, result: "[70]" });
add(
  "calculator",
  age,
  "calculator answers str() of the arithmetic, and its call is logged as calculator({...}), no POST",
  [turn(call("calculator", { expression: "2023 - 1953" })), turn(finish([70]))],
  { status: "completed", reward: 1, result: "[70]", toolReplies: 2 },
);
add(
  "calculator-error",
  age,
  "an expression the calculator cannot evaluate: ehrgym assumes the original's calculator raises like its other tools (its code is not public), ending the run with []; the port's returns 'Error: ...' and the run goes on",
  [turn(call("calculator", { expression: "70 / 0" })), turn(finish([70]))],
  { status: "invalid_action", reward: 0, toolReplies: 0 },
  { status: "completed", reward: 1, result: "[70]", toolReplies: 2 },
);
add(
  "finish-not-a-list",
  age,
  "finish(value=70): the original's finish takes a list (its model was not found in public code; the port's signature says list), so the call fails and the run ends with []; the port checks nothing and logs json.dumps(70)",
  [turn(call("finish", { value: 70 }))],
  { status: "invalid_action", reward: 0, toolReplies: 0 },
  { status: "completed", reward: 0, result: "70", toolReplies: 1 },
);
add(
  "finish-nan",
  age,
  "arguments are read with json.loads, which takes NaN: the run completes with the answer [NaN], which is not [70]",
  [turn(call("finish", '{"value": [NaN]}'))],
  { status: "completed", reward: 0, result: "[NaN]", toolReplies: 1 },
);
add(
  "finish-bad-json",
  age,
  "finish arguments that are not JSON: the original raises (run ends with []); the port calls finish() with none, which fails, and a finish call ends its run anyway (answer [])",
  [turn(call("finish", '{"value": [70'))],
  { status: "invalid_action", reward: 0, toolReplies: 0 },
  { status: "invalid_action", reward: 0, toolReplies: 1 },
);

/** Every case with its task (ids task<N>_<name>, unique). */
export const VERDICT_CASES: VerdictCase[] = cases.map((c) => ({ ...c, task: c.task(c.name) }));

/** The case a model request is about, by the tag in its user message. */
export function caseOf(messages: readonly { role: string; content?: unknown }[]): VerdictCase | undefined {
  const user = messages.find((m) => m.role === "user");
  const name = typeof user?.content === "string" ? /\[case ([\w-]+)\]/.exec(user.content)?.[1] : undefined;
  return VERDICT_CASES.find((c) => c.name === name);
}

/** What a surface reports of a run, in the form the table states it. */
export function verdictOf(run: { status: string; reward: number; result?: string | undefined; messages?: readonly { role: string }[] }, expected: Verdict): Verdict {
  const out: Verdict = { status: run.status as Verdict["status"], reward: run.reward as 0 | 1 };
  if (run.result !== undefined) out.result = run.result;
  if (expected.toolReplies !== undefined && run.messages) out.toolReplies = run.messages.filter((m) => m.role === "tool").length;
  return out;
}
