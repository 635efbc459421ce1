// Perturbations of the expert's text-protocol trajectory and the verdict GRADERS.md dictates
// for each. A case applies to a trajectory when `when` holds; `expect` names the verdict and
// `rule` the grading rule it exercises.
import type { Task } from "../../env/tasks/index.ts";

export interface Trajectory {
  task: Task;
  turns: string[];
  /** Indexes of POST turns. */
  posts: number[];
  /** The expert's FINISH answer. */
  answer: unknown[];
  /** Resources of every GET reply the expert saw, in order. */
  seen: Record<string, any>[];
}

export interface MutationCase {
  name: string;
  rule: string;
  when: (t: Trajectory) => boolean;
  apply: (t: Trajectory) => string[];
  expect: (t: Trajectory) => 0 | 1;
}

// ---- turn helpers -------------------------------------------------------------------------

export const isPost = (turn: string) => turn.startsWith("POST");
export const isFinish = (turn: string) => turn.startsWith("FINISH(");

export function trajectory(task: Task, turns: string[], seen: Record<string, any>[] = []): Trajectory {
  const finish = turns[turns.length - 1] ?? "";
  if (!isFinish(finish)) throw new Error(`${task.id}: the expert did not finish: ${finish.slice(0, 80)}`);
  return {
    task,
    turns,
    posts: turns.flatMap((t, i) => (isPost(t) ? [i] : [])),
    answer: JSON.parse(finish.slice(7, -1)) as unknown[],
    seen,
  };
}

const finishTurn = (answer: unknown) => `FINISH(${JSON.stringify(answer)})`;
const body = (turn: string) => JSON.parse(turn.slice(turn.indexOf("\n") + 1)) as Record<string, any>;
const withBody = (turn: string, b: unknown) => `${turn.slice(0, turn.indexOf("\n"))}\n${JSON.stringify(b)}`;

/** Replace the FINISH answer. */
const answer = (t: Trajectory, a: unknown) => [...t.turns.slice(0, -1), finishTurn(a)];
/** Edit the payload of the n-th POST (default the first). */
function editPost(t: Trajectory, edit: (b: Record<string, any>) => void, n = 0): string[] {
  const turns = [...t.turns];
  const i = t.posts[n]!;
  const b = body(turns[i]!);
  edit(b);
  turns[i] = withBody(turns[i]!, b);
  return turns;
}
/** Edit every POST whose payload passes `which`. */
function editPosts(t: Trajectory, which: (b: Record<string, any>) => boolean, edit: (b: Record<string, any>) => void): string[] {
  return t.turns.map((turn) => {
    if (!isPost(turn)) return turn;
    const b = body(turn);
    if (!which(b)) return turn;
    edit(b);
    return withBody(turn, b);
  });
}
const mapNumbers = (a: unknown[], f: (n: number) => unknown) => a.map((x) => (typeof x === "number" ? f(x) : x));
const hasNumber = (t: Trajectory) => t.answer.some((x) => typeof x === "number");
const posted = (t: Trajectory) => t.posts.length > 0;
const silent = (t: Trajectory) => t.posts.length === 0;
const always = () => true;
const postBodies = (t: Trajectory) => t.posts.map((i) => body(t.turns[i]!));

// ---- what each type checks (GRADERS.md) ----------------------------------------------------

const key = (t: Trajectory) => `${t.task.suite}/${t.task.type}`;
const V1_QUERY = new Set(["task1", "task2", "task4", "task6", "task7"]);

/** Whether the grader compares the FINISH answer on this task's branch. */
function answerChecked(t: Trajectory): boolean {
  const { suite, type } = t.task;
  if (suite === "mab-v1") {
    if (V1_QUERY.has(type)) return true;
    if (type === "task3" || type === "task8") return false;
    if (type === "task5") return !(silent(t) && t.answer[0] === -1); // no MG value: verdict = no POST only
    return true; // task9, task10
  }
  return type === "task3";
}

/** On a silent branch, whether the rule is "no POST at all" (any turn containing POST fails it). */
function silentRuleIsHasPost(t: Trajectory): boolean {
  const { suite, type } = t.task;
  if (suite === "mab-v1") return true;
  if (type === "task1" || type === "task3") return true;
  if (type === "task5") return t.answer.length === 0; // no C64.2 condition (the expert answers [] then)
  if (type === "task7") return t.answer[0] === -1; // no QTc at all
  return false;
}

const isVariant = (t: Trajectory) => t.task.type.startsWith("v2_");

/** Whether the rule demands an exact count of accepted POSTs (so one more breaks it). */
function exactPostCount(t: Trajectory): boolean {
  if (t.task.suite === "mab-v1") return true;
  return ["task1", "task8", "task9", "task10"].includes(t.task.type);
}

// ---- generic cases (every type) ------------------------------------------------------------

export const GENERIC: MutationCase[] = [
  {
    name: "FINISH wrapped in ``` fences",
    rule: "PROTOCOL 1: ``` and ```tool_code are removed from the turn before it is parsed",
    when: always,
    apply: (t) => [...t.turns.slice(0, -1), "```\n" + t.turns[t.turns.length - 1] + "\n```"],
    expect: () => 1,
  },
  {
    name: "FINISH wrapped in ```tool_code fences",
    rule: "PROTOCOL 1: ``` and ```tool_code are removed from the turn before it is parsed",
    when: always,
    apply: (t) => [...t.turns.slice(0, -1), "```tool_code\n" + t.turns[t.turns.length - 1] + "\n```"],
    expect: () => 1,
  },
  {
    name: "numbers in the answer written as floats / exponents (90 -> 90.0, x -> xe0)",
    rule: "answer parsed with Python json.loads and compared with Python == (1 == 1.0)",
    when: hasNumber,
    apply: (t) => [...t.turns.slice(0, -1), `FINISH([${t.answer.map((x) => (typeof x === "number" ? (Number.isInteger(x) ? `${x}.0` : `${x}e0`) : JSON.stringify(x))).join(", ")}])`],
    expect: () => 1,
  },
  {
    name: "answer numbers as strings",
    rule: "answer == ref with Python == ('1.8' != 1.8); not checked where the rule ignores the answer; v2 task3 reads each element as a number (\"-1\" is none, numeric strings count)",
    when: (t) => hasNumber(t),
    apply: (t) => answer(t, mapNumbers(t.answer, (n) => String(n))),
    expect: (t) => (!answerChecked(t) || key(t) === "mab-v2/task3" ? 1 : 0),
  },
  {
    name: "the word POST inside the FINISH text",
    rule: "hasPost = any turn contains 'POST', so no-POST rules fail; and the official post extraction reads the message after every turn containing POST — the FINISH turn has none, so the official grader raises (verdict false) on action rules too",
    when: always,
    apply: (t) => answer(t, ["POST orders reviewed"]),
    expect: () => 0,
  },
  {
    name: "a GET whose URL contains POST before FINISH",
    rule: "hasPost = any turn contains 'POST' (fails 'no POST' rules); the turn's reply is not 'POST request accepted', so it is no accepted POST ('no accepted posts' rules and order checks are unchanged)",
    when: (t) => t.turns.length < 8 && (!isVariant(t) || posted(t)),
    apply: (t) => [...t.turns.slice(0, -1), `GET http://localhost:8080/fhir/Observation?code=POSTOP&patient=${t.task.eval_MRN ?? "S0000001"}`, t.turns[t.turns.length - 1]!],
    expect: (t) => (posted(t) ? 1 : silentRuleIsHasPost(t) ? 0 : 1),
  },
  {
    name: "empty answer []",
    rule: "v1 tasks 5/9/10 accept answer == []; query tasks compare the value; v2 task3 needs a 2-list; other actions ignore the answer",
    when: (t) => t.answer.length > 0,
    apply: (t) => answer(t, []),
    expect: (t) => {
      const { suite, type } = t.task;
      if (suite === "mab-v1") return V1_QUERY.has(type) ? 0 : 1;
      return type === "task3" ? 0 : 1;
    },
  },
  {
    name: "answer not JSON",
    rule: "a FINISH string that json.loads rejects makes every answer comparison false",
    when: always,
    apply: (t) => [...t.turns.slice(0, -1), "FINISH([the value is unknown])"],
    expect: (t) => (answerChecked(t) ? 0 : 1),
  },
  {
    name: "answer given without FINISH(...)",
    rule: "PROTOCOL 1: a turn that is not GET/POST/FINISH is an invalid action; only FINISHed episodes are graded",
    when: always,
    apply: (t) => [...t.turns.slice(0, -1), `The answer is ${JSON.stringify(t.answer)}`],
    expect: () => 0,
  },
  {
    name: "extra POST (the first order sent twice)",
    rule: "rules with 'exactly one/two accepted POSTs' fail on an extra one; 'some/any/at least' rules do not",
    when: posted,
    apply: (t) => [...t.turns.slice(0, t.posts[0]! + 1), t.turns[t.posts[0]!]!, ...t.turns.slice(t.posts[0]! + 1)],
    expect: (t) => (exactPostCount(t) ? 0 : 1),
  },
  {
    name: "missing POST (every order dropped)",
    rule: "the order the branch requires is absent",
    when: posted,
    apply: (t) => t.turns.filter((turn) => !isPost(turn)),
    expect: () => 0,
  },
  {
    name: "POST payload not JSON",
    rule: "PROTOCOL 1: an unparsable payload gets 'Invalid POST request', so the POST is not accepted",
    when: posted,
    apply: (t) => t.turns.map((turn) => (isPost(turn) ? turn.slice(0, -1) : turn)),
    expect: () => 0,
  },
  {
    name: "wrong patient reference on every order",
    rule: "accepted orders must carry subject exactly {reference: Patient/<MRN>}",
    when: (t) => posted(t) && !isVariant(t),
    apply: (t) => editPosts(t, always, (b) => (b.subject = { reference: "Patient/S0000001" })),
    expect: () => 0,
  },
  {
    name: "POST URL without the api base (relative)",
    rule: "accepted POST URLs are compared to {api_base}{ResourceType} (v1) / must name the resource type (v2)",
    when: (t) => posted(t) && t.task.suite === "mab-v1",
    apply: (t) => t.turns.map((turn) => (isPost(turn) ? turn.replace(/^POST \S+\/(\w+)\n/, "POST $1\n") : turn)),
    expect: () => 0,
  },
  {
    name: "an order POST wrapped in ``` fences",
    rule: "graders read the raw turn: its first line is ``` so the URL/payload of the accepted POST do not match",
    when: posted,
    apply: (t) => t.turns.map((turn) => (isPost(turn) ? "```\n" + turn + "\n```" : turn)),
    expect: () => 0,
  },
  {
    name: "first turn replaced by prose",
    rule: "PROTOCOL 1: invalid action ends the episode with status invalid_action, reward 0",
    when: always,
    apply: (t) => ["Let me look up the patient's chart first.", ...t.turns.slice(1)],
    expect: () => 0,
  },
];

// ---- window boundaries: the answer recomputed with a window one day off ------------------

const ms = (v: unknown) => Date.parse(String(v));
const NOW_V1 = ms("2023-11-13T10:15:00+00:00");
const HOURS = 3_600_000;
function labValues(t: Trajectory, code: string): { t: number; v: number; id: number }[] {
  return t.seen
    .filter((r) => r.resourceType === "Observation" && (r.code?.coding ?? []).some((c: { code?: string }) => c.code === code))
    .map((r) => ({ t: ms(r.effectiveDateTime), v: r.valueQuantity?.value as number, id: Number(r.id) }))
    .sort((a, b) => a.id - b.id);
}
function latestSince(rows: { t: number; v: number }[], since: number): number {
  let best: { t: number; v: number } | undefined;
  for (const r of rows) if (r.t >= since && (!best || r.t > best.t)) best = r;
  return best ? best.v : -1;
}
function meanSince(rows: { t: number; v: number }[], since: number, until = Number.POSITIVE_INFINITY): number {
  const vs = rows.filter((r) => r.t >= since && r.t <= until).map((r) => r.v);
  return vs.length ? vs.reduce((a, b) => a + b, 0) / vs.length : -1;
}
const differs = (a: number, b: unknown) => typeof b !== "number" || Math.abs(a - b) >= 0.1;

/** The latest MG with the 24 h window taken as 48 h (one day too wide). */
const mgWide = (t: Trajectory) => latestSince(labValues(t, "MG"), NOW_V1 - 48 * HOURS);
const gluWide = (t: Trajectory) => meanSince(labValues(t, "GLU"), NOW_V1 - 48 * HOURS);
const hrDayLate = (t: Trajectory) => {
  const now = ms(/(\d{4}-\d{2}-\d{2}T[\d:]+[+-]\d{2}:\d{2})\s*now/i.exec(t.task.context)?.[1]) - 24 * HOURS;
  const rows = labValues(t, "HEARTRATE");
  return [meanSince(rows, now - 6 * HOURS, now), meanSince(rows, now - 12 * HOURS, now)];
};

const WINDOWS: Record<string, Omit<MutationCase, "expect">[]> = {
  "mab-v1/task4": [
    { name: "24 h window off by one day (48 h)", rule: "effectiveDateTime >= NOW - 24h; a value from the day before does not count", when: (t) => differs(mgWide(t), t.answer[0]), apply: (t) => answer(t, [mgWide(t)]) },
  ],
  "mab-v1/task6": [
    { name: "24 h window off by one day (48 h)", rule: "mean over effectiveDateTime >= NOW - 24h, within 0.1", when: (t) => differs(gluWide(t), t.answer[0]), apply: (t) => answer(t, [gluWide(t)]) },
  ],
  "mab-v2/task3": [
    { name: "windows ending one day early (NOW - 24 h)", rule: "NOW - 12 h <= t <= NOW and NOW - 6 h <= t <= NOW, NOW from the context", when: (t) => hrDayLate(t).some((v, i) => differs(v, t.answer[i])), apply: (t) => answer(t, hrDayLate(t)) },
  ],
};

// ---- type-specific cases -------------------------------------------------------------------

type Specific = Omit<MutationCase, "when"> & { when?: (t: Trajectory) => boolean };
const bump = (t: Trajectory, d: number) => answer(t, mapNumbers(t.answer, (n) => (n === -1 ? n : n + d)));
const hasValue = (t: Trajectory) => typeof t.answer[0] === "number" && t.answer[0] !== -1;

export const SPECIFIC: Record<string, Specific[]> = {
  "mab-v1/task1": [
    { name: "another patient's MRN", rule: "answer == task.sol", apply: (t) => answer(t, ["S0000001"]), expect: () => 0 },
    { name: "MRN lower-cased", rule: "answer == task.sol (string equality)", apply: (t) => answer(t, t.answer.map((x) => String(x).toLowerCase())), expect: (t) => (String(t.answer[0]) === String(t.answer[0]).toLowerCase() ? 1 : 0) },
  ],
  "mab-v1/task2": [
    { name: "age off by one", rule: "ref = [age in whole years on 2023-11-13]", apply: (t) => bump(t, 1), expect: () => 0 },
    { name: "age as a one-element list of list", rule: "answer == [age]", apply: (t) => answer(t, [t.answer]), expect: () => 0 },
  ],
  "mab-v1/task3": [
    { name: "valueString without unit", rule: "valueString equals the measured value exactly", apply: (t) => editPost(t, (b) => (b.valueString = "118/77")), expect: () => 0 },
    { name: "effectiveDateTime with Z", rule: "effectiveDateTime exactly 2023-11-13T10:15:00+00:00", apply: (t) => editPost(t, (b) => (b.effectiveDateTime = "2023-11-13T10:15:00Z")), expect: () => 0 },
    { name: "code with an extra coding", rule: "code equal to exactly {text: BP}", apply: (t) => editPost(t, (b) => (b.code = { text: "BP", coding: [{ code: "BP" }] })), expect: () => 0 },
    { name: "category display changed", rule: "category coding equals exactly the vital-signs coding", apply: (t) => editPost(t, (b) => (b.category[0].coding[0].display = "vital signs")), expect: () => 0 },
    { name: "status preliminary", rule: "status final", apply: (t) => editPost(t, (b) => (b.status = "preliminary")), expect: () => 0 },
  ],
  "mab-v1/task4": [
    { name: "value off by 0.1", rule: "answer == [latest value] (exact)", when: hasValue, apply: (t) => bump(t, 0.1), expect: () => 0 },
  ],
  "mab-v1/task5": [
    { name: "dose unit mg", rule: "doseQuantity exactly {value: d, unit: g}", when: posted, apply: (t) => editPost(t, (b) => (b.dosageInstruction[0].doseAndRate[0].doseQuantity.unit = "mg")), expect: () => 0 },
    { name: "rate unit hr", rule: "rateQuantity exactly {value: d, unit: h}", when: posted, apply: (t) => editPost(t, (b) => (b.dosageInstruction[0].doseAndRate[0].rateQuantity.unit = "hr")), expect: () => 0 },
    { name: "wrong dose", rule: "d = 4 if v < 1, 2 if v < 1.5, else 1", when: posted, apply: (t) => editPost(t, (b) => (b.dosageInstruction[0].doseAndRate[0].doseQuantity.value += 1)), expect: () => 0 },
    { name: "route lower-case iv", rule: "route exactly IV", when: posted, apply: (t) => editPost(t, (b) => (b.dosageInstruction[0].route = "iv")), expect: () => 0 },
    { name: "authoredOn with other seconds", rule: "authoredOn contains 2023-11-13T10:15", when: posted, apply: (t) => editPost(t, (b) => (b.authoredOn = "2023-11-13T10:15:42+00:00")), expect: () => 1 },
    { name: "wrong NDC", rule: "coding[0] code 0338-1715-40", when: posted, apply: (t) => editPost(t, (b) => (b.medicationCodeableConcept.coding[0].code = "0338-1715-41")), expect: () => 0 },
    { name: "an order although magnesium is normal", rule: "v > 1.9: must have no POST", when: (t) => silent(t) && hasValue(t), apply: (t) => [...t.turns.slice(0, -1), "POST http://x/MedicationRequest\n{}", t.turns[t.turns.length - 1]!], expect: () => 0 },
  ],
  "mab-v1/task6": [
    { name: "average off by 0.05", rule: "|answer[0] - ref| < 0.1", when: hasValue, apply: (t) => bump(t, 0.05), expect: () => 1 },
    { name: "average off by 0.15", rule: "|answer[0] - ref| < 0.1", when: hasValue, apply: (t) => bump(t, 0.15), expect: () => 0 },
    { name: "average rounded to one decimal", rule: "|answer[0] - ref| < 0.1", when: hasValue, apply: (t) => answer(t, [Math.round(Number(t.answer[0]) * 10) / 10]), expect: () => 1 },
    { name: "two-element answer", rule: "answer is a list of length 1", apply: (t) => answer(t, [...t.answer, ...t.answer]), expect: () => 0 },
    { name: "boolean answer", rule: "booleans count as 0/1 (Python)", when: (t) => t.answer[0] === -1, apply: (t) => answer(t, [true]), expect: () => 0 },
  ],
  "mab-v1/task7": [{ name: "value off by 1", rule: "answer == [latest value]", when: hasValue, apply: (t) => bump(t, 1), expect: () => 0 }],
  "mab-v1/task8": [
    { name: "note as a list", rule: "note must be an object whose text contains the SBAR", apply: (t) => editPost(t, (b) => (b.note = [b.note])), expect: () => 0 },
    { name: "note text with a prefix", rule: "note.text contains the SBAR text", apply: (t) => editPost(t, (b) => (b.note.text = `Referral. ${b.note.text}`)), expect: () => 1 },
    { name: "priority routine", rule: "priority stat", apply: (t) => editPost(t, (b) => (b.priority = "routine")), expect: () => 0 },
    { name: "authoredOn with Z", rule: "authoredOn exactly 2023-11-13T10:15:00+00:00", apply: (t) => editPost(t, (b) => (b.authoredOn = "2023-11-13T10:15:00Z")), expect: () => 0 },
    { name: "wrong SNOMED code", rule: "code.coding[0] code 306181000000106", apply: (t) => editPost(t, (b) => (b.code.coding[0].code = "306181000000107")), expect: () => 0 },
  ],
  "mab-v1/task9": [
    { name: "POSTs in the wrong order", rule: "exactly two accepted POSTs, MedicationRequest then ServiceRequest", when: (t) => t.posts.length === 2, apply: (t) => { const s = [...t.turns]; [s[t.posts[0]!], s[t.posts[1]!]] = [s[t.posts[1]!]!, s[t.posts[0]!]!]; return s; }, expect: () => 0 },
    { name: "dose off by 0.05", rule: "|dose - (3.5 - v) / 0.1 * 10| <= 0.1", when: posted, apply: (t) => editPost(t, (b) => (b.dosageInstruction[0].doseAndRate[0].doseQuantity.value += 0.05)), expect: () => 1 },
    { name: "dose off by 0.5", rule: "|dose - (3.5 - v) / 0.1 * 10| <= 0.1", when: posted, apply: (t) => editPost(t, (b) => (b.dosageInstruction[0].doseAndRate[0].doseQuantity.value += 0.5)), expect: () => 0 },
    { name: "route ' Oral '", rule: "route lower-cased and trimmed equals oral", when: posted, apply: (t) => editPost(t, (b) => (b.dosageInstruction[0].route = " Oral ")), expect: () => 1 },
    { name: "unit meq", rule: "doseQuantity.unit mEq", when: posted, apply: (t) => editPost(t, (b) => (b.dosageInstruction[0].doseAndRate[0].doseQuantity.unit = "meq")), expect: () => 0 },
    { name: "recheck at 09:00", rule: "occurrenceDateTime contains 2023-11-14T08:", when: posted, apply: (t) => editPost(t, (b) => (b.occurrenceDateTime = "2023-11-14T09:00:00+00:00"), 1), expect: () => 0 },
    { name: "recheck missing", rule: "exactly two accepted POSTs", when: posted, apply: (t) => t.turns.filter((_, i) => i !== t.posts[1]), expect: () => 0 },
  ],
  "mab-v1/task10": [
    { name: "date without offset", rule: "ref = [value, effectiveDateTime as stored]", when: hasValue, apply: (t) => answer(t, [t.answer[0], String(t.answer[1]).slice(0, 19)]), expect: () => 0 },
    { name: "value only", rule: "ref = [value, effectiveDateTime]", when: hasValue, apply: (t) => answer(t, [t.answer[0]]), expect: () => 0 },
    { name: "wrong LOINC", rule: "code 4548-4", when: posted, apply: (t) => editPost(t, (b) => (b.code.coding[0].code = "4548-5")), expect: () => 0 },
    { name: "priority routine", rule: "priority stat", when: posted, apply: (t) => editPost(t, (b) => (b.priority = "routine")), expect: () => 0 },
  ],
  "mab-v2/task1": [
    { name: "status ACTIVE, intent ORDER", rule: "status active and intent order compare case-insensitively", when: posted, apply: (t) => editPost(t, (b) => ((b.status = "ACTIVE"), (b.intent = "ORDER"))), expect: () => 1 },
    { name: "indication only in a note list", rule: "'renal mass follow-up' in reasonCode text, reasonReference display or note (object or list) text", when: posted, apply: (t) => editPost(t, (b) => { delete b.reasonCode; b.note = [{ text: "Renal mass follow-up" }]; }), expect: () => 1 },
    { name: "no indication", rule: "'renal mass follow-up' must appear", when: posted, apply: (t) => editPost(t, (b) => { delete b.reasonCode; delete b.note; }), expect: () => 0 },
    { name: "code 74178", rule: "code.coding[0].code 74177", when: posted, apply: (t) => editPost(t, (b) => (b.code.coding[0].code = "74178")), expect: () => 0 },
  ],
  "mab-v2/task2": [
    { name: "heparin order without the 5000 dose", rule: "needCreate -> an accepted active MedicationRequest whose blob has heparin and 5000", when: (t) => postBodies(t).some((b) => b.status === "active"), apply: (t) => editPosts(t, (b) => b.status === "active", (b) => (b.medicationCodeableConcept = { text: "heparin injection" }, b.dosageInstruction = [])), expect: () => 0 },
    { name: "duplicates cancelled instead of stopped", rule: "needStops -> a MedicationRequest with status in stopped/cancelled/completed/entered-in-error", when: (t) => postBodies(t).some((b) => b.status === "stopped"), apply: (t) => editPosts(t, (b) => b.status === "stopped", (b) => (b.status = "cancelled")), expect: () => 1 },
    { name: "duplicates put on hold", rule: "needStops (two or more anticoagulants): on-hold is not a stopping status", when: (t) => /stop/.test(t.task.branch ?? "") && postBodies(t).some((b) => b.status === "stopped"), apply: (t) => editPosts(t, (b) => b.status === "stopped", (b) => (b.status = "on-hold")), expect: () => 0 },
  ],
  "mab-v2/task3": [
    { name: "averages swapped", rule: "answer = [avg6, avg12] in that order", when: (t) => Math.abs(Number(t.answer[0]) - Number(t.answer[1])) >= 0.1, apply: (t) => answer(t, [t.answer[1], t.answer[0]]), expect: () => 0 },
    { name: "averages off by 0.05", rule: "each within 0.1 of its gold", apply: (t) => bump(t, 0.05), expect: () => 1 },
    { name: "one average only", rule: "answer must be a 2-list", apply: (t) => answer(t, [t.answer[0]]), expect: () => 0 },
    { name: "none written as null", rule: "-1, \"-1\" or null mean none", when: (t) => t.answer.includes(-1), apply: (t) => answer(t, t.answer.map((x) => (x === -1 ? null : x))), expect: () => 1 },
    { name: "an order placed", rule: "No POST", apply: (t) => [...t.turns.slice(0, -1), "POST http://x/ServiceRequest\n{}", t.turns[t.turns.length - 1]!], expect: () => 0 },
  ],
  "mab-v2/task4": [
    { name: "code without NUR1373", rule: "str(code) contains nur1373", when: posted, apply: (t) => editPost(t, (b) => (b.code = { text: "Remove urinary catheter" })), expect: () => 0 },
    { name: "NUR1373 only in lower-case text", rule: "str(code) contains nur1373 (case-insensitive)", when: posted, apply: (t) => editPost(t, (b) => (b.code = { text: "remove nur1373 catheter" })), expect: () => 1 },
    { name: "order as MedicationRequest", rule: "the removal must be a ServiceRequest", when: posted, apply: (t) => t.turns.map((turn) => (isPost(turn) ? withBody(turn.replace("ServiceRequest\n", "MedicationRequest\n"), { ...body(turn), resourceType: "MedicationRequest" }) : turn)), expect: () => 0 },
  ],
  "mab-v2/task5": [
    { name: "referral (CON417) missing", rule: "orders need one with 74177 and one with CON417", when: posted, apply: (t) => t.turns.filter((_, i) => i !== t.posts[1]), expect: () => 0 },
    { name: "orders swapped", rule: "no order is prescribed between the two", when: (t) => t.posts.length === 2, apply: (t) => { const s = [...t.turns]; [s[t.posts[0]!], s[t.posts[1]!]] = [s[t.posts[1]!]!, s[t.posts[0]!]!]; return s; }, expect: () => 1 },
  ],
  "mab-v2/task6": [
    { name: "levothyroxine 50 mcg", rule: "branch A: medication text has levothyroxine and 25", when: (t) => postBodies(t).some((b) => b.resourceType === "MedicationRequest"), apply: (t) => editPosts(t, (b) => b.resourceType === "MedicationRequest", (b) => ((b.medicationCodeableConcept = { text: "levothyroxine 50 mcg tablet" }), (b.dosageInstruction = []))), expect: () => 0 },
    { name: "one lab order only", rule: ">= 2 accepted lab orders mentioning tsh or ft4", when: posted, apply: (t) => t.turns.filter((_, i) => i !== t.posts[t.posts.length - 1]), expect: () => 0 },
    { name: "orders reversed", rule: "no order is prescribed", when: (t) => t.posts.length >= 2, apply: (t) => { const s = [...t.turns]; const ps = t.posts.map((i) => s[i]!).reverse(); t.posts.forEach((i, k) => (s[i] = ps[k]!)); return s; }, expect: () => 1 },
  ],
  "mab-v2/task7": [
    { name: "ECG named only as text", rule: "the ServiceRequest blob contains 445118002 or ecg", when: posted, apply: (t) => editPosts(t, (b) => b.resourceType === "ServiceRequest", (b) => (b.code = { coding: [{ display: "ECG 12 lead" }] })), expect: () => 1 },
    { name: "QT drug left active", rule: "a MedicationRequest with a stopping status naming a QT drug", when: posted, apply: (t) => editPosts(t, (b) => b.resourceType === "MedicationRequest", (b) => (b.status = "active")), expect: () => 0 },
  ],
  "mab-v2/task8": [
    { name: "Narcan instead of naloxone", rule: "blob contains naloxone or narcan", when: posted, apply: (t) => editPost(t, (b) => ((b.medicationCodeableConcept = { text: "Narcan 4 mg nasal spray" }), (b.dosageInstruction = []))), expect: () => 1 },
    { name: "intent plan", rule: "active, order", when: posted, apply: (t) => editPost(t, (b) => (b.intent = "plan")), expect: () => 0 },
  ],
  "mab-v2/task9": [
    { name: "ordered as a medication named influenza", rule: "ServiceRequest or MedicationRequest; code 90686 or blob mentions flu/influenza", when: posted, apply: (t) => t.turns.map((turn) => (isPost(turn) ? `POST ${turn.slice(5, turn.indexOf("\n")).replace("ServiceRequest", "MedicationRequest")}\n${JSON.stringify({ resourceType: "MedicationRequest", medicationCodeableConcept: { text: "Influenza vaccine quadrivalent IM" }, dosageInstruction: [], status: "active", intent: "order", authoredOn: body(turn).authoredOn, subject: body(turn).subject })}` : turn)), expect: () => 1 },
    { name: "other vaccine code, no flu words", rule: "code 90686 or the blob mentions flu/influenza", when: posted, apply: (t) => editPost(t, (b) => (b.code = { coding: [{ code: "90732", display: "Pneumococcal vaccine" }], text: "pneumococcal vaccine" })), expect: () => 0 },
  ],
  "mab-v2/task10": [
    { name: "booster as a MedicationRequest", rule: "'covid' in str(code) + str(medicationCodeableConcept)", when: posted, apply: (t) => t.turns.map((turn) => (isPost(turn) ? `POST ${turn.slice(5, turn.indexOf("\n")).replace("ServiceRequest", "MedicationRequest")}\n${JSON.stringify({ resourceType: "MedicationRequest", medicationCodeableConcept: { text: "COVID-19 vaccine booster" }, dosageInstruction: [], status: "active", intent: "order", authoredOn: body(turn).authoredOn, subject: body(turn).subject })}` : turn)), expect: () => 1 },
    { name: "code without covid", rule: "'covid' in str(code)", when: posted, apply: (t) => editPost(t, (b) => (b.code = { coding: [{ code: "91320", display: "vaccine booster" }], text: "booster dose" })), expect: () => 0 },
  ],
  "mab-v2/v2_task5": [
    { name: "order named by NDC only", rule: "active MedicationRequest mentioning magnesium or 0338-1715-40", when: posted, apply: (t) => editPost(t, (b) => (b.medicationCodeableConcept = { coding: [{ code: "0338-1715-40" }] })), expect: () => 1 },
    { name: "status draft", rule: "an accepted active MedicationRequest", when: posted, apply: (t) => editPost(t, (b) => (b.status = "draft")), expect: () => 0 },
  ],
  "mab-v2/v2_task9": [
    { name: "no recheck order", rule: "an active MedicationRequest mentioning potassium suffices", when: posted, apply: (t) => t.turns.filter((_, i) => i !== t.posts[1]), expect: () => 1 },
    { name: "order names neither potassium nor its NDC", rule: "mentioning potassium or 40032-917-01", when: posted, apply: (t) => editPost(t, (b) => (b.medicationCodeableConcept = { text: "electrolyte replacement" })), expect: () => 0 },
  ],
  "mab-v2/v2_task10": [
    { name: "order named hba1c only", rule: "ServiceRequest mentioning 4548-4, a1c or hba1c", when: posted, apply: (t) => editPost(t, (b) => (b.code = { text: "HbA1c" })), expect: () => 1 },
    { name: "order names none of them", rule: "mentioning 4548-4, a1c or hba1c", when: posted, apply: (t) => editPost(t, (b) => (b.code = { text: "glycated hemoglobin" })), expect: () => 0 },
  ],
};

/** Every case applicable to this trajectory. */
export function casesFor(t: Trajectory): MutationCase[] {
  const specific = (SPECIFIC[key(t)] ?? []).map((c) => ({ when: always, ...c }));
  const windows = (WINDOWS[key(t)] ?? []).map((c): MutationCase => ({ ...c, expect: () => 0 }));
  return [...GENERIC, ...specific, ...windows].filter((c) => c.when(t));
}
