// The verdict transcripts: one table, played through every surface (the environment, /v1/score, a
// reward-server episode, `ehrgym eval` and `ehrgym rollout`), each of which must reach the same verdict.
// The tool-protocol cases are kinds where ehrgym and the reference used to differ (issue 31); the
// text-protocol cases carry reasoning (issue 39): inline `<think>` blocks and the endpoints' reasoning
// fields, whose actions are never executed; `official` is the verdict under `--think-blocks official`.
//
// `original` is the verdict MedAgentBench V2's own code gives, read off its agent loop (a failing call
// raises and ends the run, finish returns at once, a turn without a call stops), the wrapper's
// `_to_task_result` (each call logged as "METHOD url\n" + json.dumps(arguments) or `name(arguments)`,
// then "METHOD request accepted" after a mapped call's output; the answer "[]" when finish was never
// called) and the official `check_has_post`/`extract_posts` (any agent item containing "POST"; accepted
// when the next item says "POST request accepted"; IndexError -> 0 when such an item is last).
// `medarc` is the verifiers port's (MedARC med-lm-envs `environments/medagentbenchv2`: env.py runs
// every call of a turn, answers a failing one "Error: ...", ends after a turn that called finish;
// graders.py logs all of a turn's calls before their replies and grades every task with new_refsol's
// task<N> of its number; tools.py takes keyword arguments). The tasks are new_refsol's (mab-v2), whose
// verdicts both modes compute the same way, plus one v1-style task.
import type { Message } from "../../env/core/index.ts";
import { createStoreBuilder, type FhirStore } from "../../env/fhir/index.ts";
import type { EpisodeStatus, Protocol } from "../../env/protocol/index.ts";
import type { Task } from "../../env/tasks/index.ts";
import { lab, patient } from "../core/fixtures.ts";

const MRN = "S1000001";
const NOW = "2023-11-13T10:15:00+00:00";
const CONTEXT = `It's ${NOW} now`;

/** The cases' EHR: one patient (born 1953-11-13: 70 on 2023-11-13) with heart rates 80 at 08:00 and 70
 *  at 02:00 on the task's day (and 60 the day before, outside both windows); no procedure, no order. */
export function verdictStore(): FhirStore {
  const b = createStoreBuilder();
  b.addResource(patient(MRN, "Stafford", "Peter", "1953-11-13"));
  b.addResource(lab("500", MRN, "HEARTRATE", 80, "2023-11-13T08:00:00+00:00"));
  b.addResource(lab("501", MRN, "HEARTRATE", 70, "2023-11-13T02:00:00+00:00"));
  b.addResource(lab("502", MRN, "HEARTRATE", 60, "2023-11-12T08:00:00+00:00"));
  return b.build();
}

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
  /** Default tools. */
  protocol?: Protocol;
  /** Text protocol: the verdict when the turn text is read as the official harness reads it. */
  official?: Verdict;
}

// Each case names itself in its instruction: a scripted model finds its turns by it.
const tag = (name: string) => ` [case ${name}]`;
const v2 = (type: string, instruction: string) => (name: string): Task => ({ id: `${type}_${name}`, suite: "mab-v2", type, instruction: `${instruction}${tag(name)}`, context: CONTEXT, eval_MRN: MRN });
/** new_refsol task3: no POST at all (check_has_post), and the answer [avg 6 h, avg 12 h] = [80, 75]. */
const heartRate = v2("task3", `What are the average heart rates of patient ${MRN} over the last 6 and the last 12 hours?`);
/** new_refsol task9 with no influenza vaccine on record: exactly one accepted order for it (the answer is not checked). */
const flu = v2("task9", `Check whether patient ${MRN} needs an influenza vaccine and order it if so.`);
/** new_refsol task4 with no catheter on record: no accepted POST (the answer is not checked, "[]" included). */
const catheter = v2("task4", `Check patient ${MRN}'s urinary catheter and order its removal if it has been in too long.`);
/** refsol task2 (age, mab-v1): no POST, and the answer [70]; the port grades it with new_refsol task2 (DVT). */
const age = (name: string): Task => ({ id: `task2_${name}`, suite: "mab-v1", type: "task2", instruction: `What's the age of the patient with MRN of ${MRN}?${tag(name)}`, context: CONTEXT, eval_MRN: MRN });

type Call = NonNullable<Message["tool_calls"]>[number];
let n = 0;
const call = (name: string, args: unknown): Call => ({ id: `call_v${n++}`, type: "function", function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args) } });
const turn = (...calls: Call[]): Message => ({ role: "assistant", content: null, tool_calls: calls });
const say = (content: string, ...calls: Call[]): Message => (calls.length ? { role: "assistant", content, tool_calls: calls } : { role: "assistant", content });
const conditions = () => call("fhir_condition_search", { search_params: { code: null, patient: MRN }, explanation: "read the problem list" });
const heartRates = (explanation = "read the heart rates") => call("fhir_observation_search", { search_params: { code: "HEARTRATE", patient: MRN }, explanation });
const finish = (value: unknown) => call("finish", { value });
const AVERAGES = [80, 75];
const fluOrder = (over: Record<string, unknown> = {}) => ({
  resourceType: "ServiceRequest",
  code: { coding: [{ system: "http://www.ama-assn.org/go/cpt", code: "90686", display: "Influenza vaccine, quadrivalent" }] },
  authoredOn: NOW,
  status: "active",
  intent: "order",
  priority: "routine",
  subject: { reference: `Patient/${MRN}` },
  note: { text: "Annual influenza vaccine" },
  occurrenceDateTime: NOW,
  ...over,
});
const orderFlu = (over?: Record<string, unknown>) => call("fhir_service_request_create", fluOrder(over));
const times = <T>(k: number, f: () => T): T[] => Array.from({ length: k }, f);

type Draft = Omit<VerdictCase, "task"> & { task: (name: string) => Task };
const cases: Draft[] = [];
function add(name: string, task: (name: string) => Task, why: string, turns: Message[], original: Verdict, medarc: Verdict = original): void {
  cases.push({ name, task, why, turns, original, medarc });
}

add("search-then-finish", heartRate, "a search, then finish([80, 75]): no item contains POST and both averages are right", [turn(heartRates()), turn(finish(AVERAGES))], { status: "completed", reward: 1, result: "[80, 75]", toolReplies: 2 });

add(
  "no-tool-call",
  catheter,
  "a turn without a tool call stops the loop; the run is still graded, with the answer [], and no order was due",
  [say("There is no catheter on record, nothing to order.")],
  { status: "invalid_action", reward: 1, toolReplies: 0 },
);
add("no-tool-call-wrong", heartRate, "graded with the answer [], which is not the two averages", [say("The averages are 80 and 75.")], { status: "invalid_action", reward: 0 });

add(
  "turn-limit",
  catheter,
  "8 turns of searches: the turn limit ends the run, graded with [] and no accepted POST -> right",
  times(8, () => turn(conditions())),
  { status: "limit_reached", reward: 1, toolReplies: 8 },
  { status: "limit_reached", reward: 1, toolReplies: 7 },
);
add(
  "finish-at-limit",
  heartRate,
  "finish in the 8th turn: the original runs it and returns; the port stops at its turn limit before the environment answers, so the finish never runs and the run is graded with []",
  [...times(7, () => turn(heartRates())), turn(finish(AVERAGES))],
  { status: "completed", reward: 1, result: "[80, 75]", toolReplies: 8 },
  { status: "limit_reached", reward: 0, toolReplies: 7 },
);
add(
  "create-last-at-limit",
  flu,
  "the turn limit falls right after a create: its output 'POST request accepted' is the last item and contains POST, so extract_posts reads past the end (IndexError -> 0)",
  [...times(7, () => turn(conditions())), turn(orderFlu())],
  { status: "limit_reached", reward: 0 },
  // The port never runs the create; its call, logged with no reply after it, is the last item: IndexError -> 0.
  { status: "limit_reached", reward: 0, toolReplies: 7 },
);

add(
  "failed-call-ends-run",
  heartRate,
  "flat arguments where the original nests search_params fail validation: the original's loop raises and the run ends with []; the port answers an error and goes on to finish",
  [turn(call("fhir_observation_search", { code: "HEARTRATE", patient: MRN })), turn(finish(AVERAGES))],
  { status: "invalid_action", reward: 0, toolReplies: 0 },
  { status: "completed", reward: 1, result: "[80, 75]", toolReplies: 2 },
);
add(
  "optional-fields-omitted",
  heartRate,
  "category and date left out: the original's fields are required (null allowed), the port's default to None",
  [turn(call("fhir_medication_request_search", { patient: MRN })), turn(finish(AVERAGES))],
  { status: "invalid_action", reward: 0, toolReplies: 0 },
  { status: "completed", reward: 1, result: "[80, 75]", toolReplies: 2 },
);

add("create-then-finish", flu, "one create, its output, then finish: one accepted order", [turn(orderFlu()), turn(finish([]))], { status: "completed", reward: 1, result: "[]", toolReplies: 2 });
add(
  "create-batched-with-search",
  flu,
  "original: each call then its output, so the create is followed by 'POST request accepted'; the port logs both calls before both replies, so the create is followed by the search's reply and is not counted",
  [turn(conditions(), orderFlu()), turn(finish([]))],
  { status: "completed", reward: 1, result: "[]", toolReplies: 3 },
  { status: "completed", reward: 0, result: "[]", toolReplies: 3 },
);
add(
  "finish-with-create",
  flu,
  "original: create, its output, finish; the port: create, finish, then 'POST request accepted' as the last item (IndexError -> 0)",
  [turn(orderFlu(), finish([]))],
  { status: "completed", reward: 1, result: "[]", toolReplies: 2 },
  { status: "completed", reward: 0, result: "[]", toolReplies: 2 },
);
add(
  "calls-after-finish",
  heartRate,
  "the original returns right after finish: the create batched after it never runs and is never logged; the port runs it, and its POST fails task3's no-POST rule",
  [turn(finish(AVERAGES), orderFlu())],
  { status: "completed", reward: 1, result: "[80, 75]", toolReplies: 1 },
  { status: "completed", reward: 0, result: "[80, 75]", toolReplies: 2 },
);
add(
  "unknown-create",
  heartRate,
  "an unknown *_create tool is no create: the original raises on the name (run ends with []); the port rewrites it to calculator({}), answers an error and goes on",
  [turn(call("fhir_immunization_create", fluOrder())), turn(finish(AVERAGES))],
  { status: "invalid_action", reward: 0, toolReplies: 0 },
  { status: "completed", reward: 1, result: "[80, 75]", toolReplies: 2 },
);
add(
  "raw-create-arguments",
  flu,
  "the create's raw arguments are logged (a subject with a display the models ignore), and task9 needs subject to be exactly {reference}",
  [turn(orderFlu({ subject: { reference: `Patient/${MRN}`, display: "Peter Stafford" } })), turn(finish([]))],
  { status: "completed", reward: 0, result: "[]" },
);
add(
  "post-in-explanation",
  heartRate,
  "a search is logged with its arguments, so an explanation saying POST makes check_has_post true",
  [turn(heartRates("no POST needed")), turn(finish(AVERAGES))],
  { status: "completed", reward: 0, result: "[80, 75]" },
);
add("post-in-text", heartRate, "assistant text is an agent item: 'POST' in it makes check_has_post true", [say("I will not POST anything.", finish(AVERAGES))], { status: "completed", reward: 0, result: "[80, 75]" });
add(
  "calculator",
  heartRate,
  "calculator answers str() of the arithmetic, and its call is logged as calculator({...}), no POST",
  [turn(call("calculator", { expression: "(80 + 70) / 2" })), turn(finish(AVERAGES))],
  { status: "completed", reward: 1, result: "[80, 75]", toolReplies: 2 },
);
add(
  "calculator-error",
  heartRate,
  "an expression the calculator cannot evaluate: ehrgym assumes the original's calculator raises like its other tools (its code is not public), ending the run with []; the port's returns 'Error: ...' and the run goes on",
  [turn(call("calculator", { expression: "80 / 0" })), turn(finish(AVERAGES))],
  { status: "invalid_action", reward: 0, toolReplies: 0 },
  { status: "completed", reward: 1, result: "[80, 75]", toolReplies: 2 },
);
add(
  "finish-not-a-list",
  heartRate,
  "finish(value=80): the original's finish takes a list (its model is not public; the port's signature says list), so the call fails and the run ends with []; the port checks nothing and logs json.dumps(80), not a pair",
  [turn(call("finish", { value: 80 }))],
  { status: "invalid_action", reward: 0, toolReplies: 0 },
  { status: "completed", reward: 0, result: "80", toolReplies: 1 },
);
add(
  "finish-nan",
  heartRate,
  "arguments are read with json.loads, which takes NaN: the run completes with the answer [NaN], not a pair",
  [turn(call("finish", '{"value": [NaN]}'))],
  { status: "completed", reward: 0, result: "[NaN]", toolReplies: 1 },
);
add(
  "finish-bad-json",
  heartRate,
  "finish arguments that are not JSON: the original raises (run ends with []); the port calls finish() with none, which fails, and a finish call ends its run anyway (answer [])",
  [turn(call("finish", '{"value": [80'))],
  { status: "invalid_action", reward: 0, toolReplies: 0 },
  { status: "invalid_action", reward: 0, toolReplies: 1 },
);
add(
  "v1-task-by-number",
  age,
  "a v1-style task (age): the original's refsol task2 passes finish([70]); the port grades by the number in the id with new_refsol task2 (DVT hygiene), which wants a heparin order here",
  [turn(finish([70]))],
  { status: "completed", reward: 1, result: "[70]" },
  { status: "completed", reward: 0, result: "[70]" },
);

// Text-protocol cases with reasoning, on the age task (refsol task2: no POST, the answer [70]).
const PATIENT_GET = `GET http://localhost:8080/fhir/Patient?identifier=${MRN}`;
const text = (content: string, fields: Pick<Message, "reasoning_content" | "reasoning"> = {}): Message => ({ role: "assistant", content, ...fields });
function addText(name: string, why: string, turns: Message[], split: Verdict, official: Verdict): void {
  cases.push({ name, task: age, why, turns, original: split, medarc: split, protocol: "text", official });
}
addText(
  "think-then-finish",
  "the block is reasoning (a POST and a wrong FINISH inside it are neither actions nor agent text the graders read); the FINISH after it is the action",
  [text("<think>\nBorn 1953-11-13, so FINISH([71]) would be wrong. No need to POST anything.\n</think>\n\nFINISH([70])")],
  { status: "completed", reward: 1, result: "[70]", toolReplies: 0 },
  { status: "invalid_action", reward: 0, toolReplies: 0 },
);
addText(
  "finish-inside-think",
  "the FINISH inside the block is not executed; the one after it is, with the wrong age",
  [text("<think>FINISH([70])</think>FINISH([71])")],
  { status: "completed", reward: 0, result: "[71]" },
  { status: "invalid_action", reward: 0 },
);
addText(
  "think-then-get",
  "the GET after the block runs (one environment reply), then FINISH",
  [text(`<think>Look the patient up first.</think>\n${PATIENT_GET}`), text("FINISH([70])")],
  { status: "completed", reward: 1, result: "[70]", toolReplies: 1 },
  { status: "invalid_action", reward: 0, toolReplies: 0 },
);
addText(
  "unclosed-think",
  "a block never closed (the model ran out of tokens) is all reasoning: the GET inside it never runs, and there is no action",
  [text(`<think>\nI should look the patient up.\n${PATIENT_GET}`)],
  { status: "invalid_action", reward: 0, toolReplies: 0 },
  { status: "invalid_action", reward: 0, toolReplies: 0 },
);
addText(
  "template-opened-think",
  "the chat template opened <think> in the prompt (DeepSeek-R1, Qwen3-2507): the text up to </think> is reasoning",
  [text(`The age is 70; I must not POST.\n${PATIENT_GET}\n</think>\n\nFINISH([70])`)],
  { status: "completed", reward: 1, result: "[70]", toolReplies: 0 },
  { status: "invalid_action", reward: 0, toolReplies: 0 },
);
addText(
  "reasoning-field",
  "reasoning in vLLM's `reasoning` field is never agent text: its POST does not count and its FINISH does not run",
  [text("\n\nFINISH([70])", { reasoning: "FINISH([71])? No: born 1953-11-13, 70 today. Nothing to POST." })],
  { status: "completed", reward: 1, result: "[70]" },
  { status: "completed", reward: 1, result: "[70]" },
);
addText(
  "reasoning-content-field",
  "the same in the older `reasoning_content` field; the GET in it never runs",
  [text("FINISH([70])", { reasoning_content: `${PATIENT_GET}\nwould show the birth date; 1953-11-13 makes 70.` })],
  { status: "completed", reward: 1, result: "[70]", toolReplies: 0 },
  { status: "completed", reward: 1, result: "[70]", toolReplies: 0 },
);

/** Every case with its task (ids task<N>_<name>, unique). */
export const VERDICT_CASES: VerdictCase[] = cases.map((c) => ({ ...c, task: c.task(c.name) }));

/** The case a model request is about, by the tag in its user message. */
export function caseOf(messages: readonly { role: string; content?: unknown }[]): VerdictCase | undefined {
  const user = messages.find((m) => m.role === "user");
  const name = typeof user?.content === "string" ? /\[case ([\w-]+)\]/.exec(user.content)?.[1] : undefined;
  return VERDICT_CASES.find((c) => c.name === name);
}

/** What a surface reports of a run, in the form the table states it (`toolReplies` counts the environment's
 *  replies: tool messages, or in the text protocol the user messages after the prompt). */
export function verdictOf(run: { status: string; reward: number; result?: string | undefined; messages?: readonly { role: string }[] }, expected: Verdict, protocol: Protocol = "tools"): Verdict {
  const out: Verdict = { status: run.status as Verdict["status"], reward: run.reward as 0 | 1 };
  if (run.result !== undefined) out.result = run.result;
  if (expected.toolReplies !== undefined && run.messages) {
    out.toolReplies = protocol === "tools" ? run.messages.filter((m) => m.role === "tool").length : run.messages.filter((m) => m.role === "user").length - 1;
  }
  return out;
}
