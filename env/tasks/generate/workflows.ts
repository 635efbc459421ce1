// The `workflows` generator: one patient's chart review asking for 4 to 10 rules at once, balanced over
// the rules and their branches (a rule's branch is its source grader's, read at the review's NOW).
import type { FhirReader } from "../../fhir/index.ts";
import { PyError } from "../../python/index.ts";
import { hash32, Rng } from "../../util/index.ts";
import { V1_NOW } from "../clock.ts";
import { Task } from "../task.ts";
import { type RuleState, WORKFLOW_DEFAULT_ROUNDS, WORKFLOW_RULES, type WorkflowRule, workflowRule } from "../workflow-rules.ts";

export const WORKFLOW_NOW = V1_NOW;
/** The second NOW a review may be set at: 6.5 h after the v1 clock, the last charted minute. At the v1
 *  clock the heart-rate rule's "12 h only" branch cannot occur on the synthetic charts: an inpatient's
 *  vitals come at most 4 h apart until the chart ends 5-50 min before the v1 clock, so whoever has a
 *  reading in the 12 h window has one in the 6 h window too, and nobody else's stay ends that night.
 *  At this NOW the 6 h window holds nothing (no data after the v1 clock) and the 12 h window starts
 *  5.5 h before the v1 clock, so every such inpatient is "12 h only". Of the other rules only
 *  magnesium (24 h window) and glucose-mean (24 h window) read the clock differently there. */
export const WORKFLOW_LATE_NOW = "2023-11-13T16:45:00+00:00";
/** Where the generator may set a review, the v1 clock first (preferred when both serve as well). */
export const WORKFLOW_NOWS: readonly string[] = [WORKFLOW_NOW, WORKFLOW_LATE_NOW];
export const MIN_RULES = 4;
export const MAX_RULES = 10;
/** Every NO_ORDER_EVERY-th review (the 4th, 14th, ...) asks only for rules whose data needs no order. */
const NO_ORDER_EVERY = 10;

const ORDER_RULES = WORKFLOW_RULES.filter((r) => r.kind === "order");
const REPORT_RULES = WORKFLOW_RULES.filter((r) => r.kind === "report");

const INTROS = [
  "I'm rounding on patient {{mrn}} this morning and need a chart review.",
  "Please do a pre-discharge chart review for patient {{mrn}}.",
  "I'm covering for a colleague today: please go through the chart of patient {{mrn}}.",
  "Before our team huddle, please review the chart of patient {{mrn}}.",
];
const CLOSERS = ["Order only what these call for.", "Don't place anything the chart doesn't call for.", "Leave the chart alone wherever nothing is needed."];

/** The round limit a review of `n` rules states (its first message says it). */
export function workflowRounds(n: number): number {
  return Math.max(WORKFLOW_DEFAULT_ROUNDS, 4 * n);
}

/** One patient at one NOW (a patient is a candidate once per NOW). */
interface Candidate {
  mrn: string;
  now: string;
  /** Index in WORKFLOW_NOWS: ties go to the earlier NOW. */
  late: number;
  states: Map<string, RuleState>;
}

function statesOf(reader: FhirReader, mrn: string, now: string): Map<string, RuleState> {
  const out = new Map<string, RuleState>();
  for (const rule of WORKFLOW_RULES) {
    let s: RuleState;
    try {
      s = rule.state(reader, mrn, now);
    } catch (e) {
      if (e instanceof PyError) continue; // data the source grader cannot grade
      throw e;
    }
    if (rule.excluded?.[s.branch] === undefined) out.set(rule.id, s);
  }
  return out;
}

/** Least-used first, seeded ties; skipping rules that clash with one already taken. */
function pickRules(pool: readonly WorkflowRule[], n: number, use: Map<string, number>, rng: Rng, taken: string[] = []): string[] {
  const order = rng.shuffle([...pool]).sort((a, b) => (use.get(a.id) ?? 0) - (use.get(b.id) ?? 0));
  const out: string[] = [];
  for (const r of order) {
    if (out.length >= n) break;
    if ([...taken, ...out].some((t) => r.conflicts?.includes(t))) continue;
    out.push(r.id);
  }
  return out;
}

const key = (rule: string, branch: string) => `${rule}|${branch}`;

function wording(rules: readonly string[], mrn: string, now: string, rng: Rng): { instruction: string; context: string } {
  const asks = rules.map((id) => {
    const r = workflowRule(id);
    return { kind: r.kind, text: rng.pick(r.asks) };
  });
  const orders = asks.filter((a) => a.kind === "order").map((a) => a.text);
  const reports = asks.filter((a) => a.kind === "report").map((a) => a.text);
  const parts = [rng.pick(INTROS).replace("{{mrn}}", mrn)];
  if (orders.length) parts.push(`${rng.pick(["What I need:", "Specifically:", "To do:"])} ${orders.map((t, i) => `(${i + 1}) ${t}`).join("; ")}.`);
  if (reports.length) {
    const list = reports.length === 1 ? reports[0]! : `${reports.slice(0, -1).join(", ")} and ${reports.at(-1)!}`;
    parts.push(`${orders.length ? "Then " : "Please "}${list}.`);
  }
  parts.push(rng.pick(CLOSERS));
  const keys = rules.flatMap((id) => workflowRule(id).keys ?? []);
  const example = `{${keys.map((k) => `"${k.key}": ...`).join(", ")}}`;
  const format = keys.length
    ? `When you are done, finish with one JSON object with exactly these keys: ${keys.map((k) => `"${k.key}" (${k.format})`).join(", ")}, e.g. ${example}. Where the answer must be a list (the finish tool), give a list holding that object as one JSON string.`
    : "When you are done, finish with an empty answer ([]).";
  const rounds = workflowRounds(rules.length);
  const hints = rules.map((id) => workflowRule(id).hints).join(" ");
  const context = `It's ${now} now. You have at most ${rounds} rounds for this review. Orders are for today, authored now, status active, intent order, subject the patient. ${hints} ${format}`;
  return { instruction: parts.join(" "), context };
}

export interface WorkflowGenerateOptions {
  count: number;
  seed: number;
  /** Eligible patients (after hold-out and split), sorted. */
  mrns: readonly string[];
}

/** `count` reviews on the eligible patients. */
export function generateWorkflowTasks(reader: FhirReader, opts: WorkflowGenerateOptions): Task[] {
  const rng = new Rng((hash32("workflows/review") ^ Math.imul(opts.seed >>> 0, 0x9e3779b1)) >>> 0, "mulberry32");
  const candidates: Candidate[] = opts.mrns
    .flatMap((mrn) => WORKFLOW_NOWS.map((now, late) => ({ mrn, now, late, states: statesOf(reader, mrn, now) })))
    .filter((c) => c.states.size >= MIN_RULES);
  if (candidates.length === 0) return [];
  const patientUse = new Map<string, number>();
  const ruleUse = new Map<string, number>();
  const branchUse = new Map<string, number>();
  const tasks: Task[] = [];
  for (let i = 0; i < opts.count; i++) {
    const n = rng.int(MIN_RULES, MAX_RULES);
    const nReport = rng.int(1, Math.min(REPORT_RULES.length, n - MIN_RULES + 1));
    let cand: Candidate | undefined;
    let rules: string[] = [];
    if (i % NO_ORDER_EVERY === 3) {
      // A review where nothing needs ordering: the candidate with the most order rules needing none.
      const quiet = (c: Candidate) => ORDER_RULES.filter((r) => c.states.get(r.id)?.needsOrder === false);
      const best = Math.max(...candidates.map((c) => quiet(c).length));
      cand = rng.pick(candidates.filter((c) => quiet(c).length === best));
      const reportPool = REPORT_RULES.filter((r) => cand!.states.has(r.id));
      rules = pickRules(quiet(cand), n - nReport, ruleUse, rng);
      rules.push(...pickRules(reportPool, Math.max(nReport, MIN_RULES - rules.length), ruleUse, rng));
    } else {
      rules = pickRules(ORDER_RULES, n - nReport, ruleUse, rng);
      rules.push(...pickRules(REPORT_RULES, nReport, ruleUse, rng, rules));
      const fits = candidates.filter((c) => rules.every((r) => c.states.has(r)));
      const pool = fits.length ? fits : candidates;
      // Least-used branches first, then least-used patients, then the earlier NOW; seeded ties.
      const score = (c: Candidate) => rules.reduce((s, r) => s + (branchUse.get(key(r, c.states.get(r)?.branch ?? "")) ?? 0), 0) * 4 + (patientUse.get(c.mrn) ?? 0) + c.late / 2;
      const shuffled = rng.shuffle([...pool]);
      cand = shuffled.reduce((a, b) => (score(b) < score(a) ? b : a));
      rules = rules.filter((r) => cand!.states.has(r));
    }
    const p = cand!;
    if (rules.length < MIN_RULES) continue;
    patientUse.set(p.mrn, (patientUse.get(p.mrn) ?? 0) + 1);
    const ordered = WORKFLOW_RULES.map((r) => r.id).filter((id) => rules.includes(id));
    for (const r of ordered) {
      ruleUse.set(r, (ruleUse.get(r) ?? 0) + 1);
      const k = key(r, p.states.get(r)!.branch);
      branchUse.set(k, (branchUse.get(k) ?? 0) + 1);
    }
    const text = wording(ordered, p.mrn, p.now, rng);
    tasks.push(
      Task.parse({
        id: `workflows/review/${opts.seed}-${i + 1}`,
        suite: "workflows",
        type: "review",
        instruction: text.instruction,
        context: text.context,
        eval_MRN: p.mrn,
        clock: p.now,
        branch: ordered.map((r) => `${r}=${p.states.get(r)!.branch}`).join(","),
        rules: ordered,
        max_rounds: workflowRounds(ordered.length),
      }),
    );
  }
  return tasks;
}
