// workflows: a chart review is the source rules' own plans played one after another on one chart. Each
// search is sent once (later rules reuse what an earlier one read, as a clinician keeps the chart open),
// the orders are placed once everything is read, and the finish carries the reported values as one object.
import type { FhirResource } from "../../env/fhir/index.ts";
import { ExpertError, type Plan, type PlanContext } from "./plan.ts";
import { V1_PLANS } from "./plans-v1.ts";
import { V2_PLANS } from "./plans-v2.ts";

/** Each rule's plan (the source task's), and for report rules how its answer becomes the object's keys. */
const RULE_PLANS: Record<string, { plan: Plan; report?: (answer: unknown[]) => Record<string, unknown> }> = {
  "ct-follow-up": { plan: V2_PLANS.task1! },
  "dvt-prophylaxis": { plan: V2_PLANS.task2! },
  catheter: { plan: V2_PLANS.task4! },
  "renal-mass": { plan: V2_PLANS.task5! },
  thyroid: { plan: V2_PLANS.task6! },
  qtc: { plan: V2_PLANS.task7! },
  naloxone: { plan: V2_PLANS.task8! },
  "flu-vaccine": { plan: V2_PLANS.task9! },
  "covid-booster": { plan: V2_PLANS.task10! },
  magnesium: { plan: V1_PLANS.task5! },
  potassium: { plan: V1_PLANS.task9! },
  a1c: { plan: V1_PLANS.task10! },
  age: { plan: V1_PLANS.task2!, report: ([age]) => ({ age }) },
  "heart-rate": { plan: V2_PLANS.task3!, report: ([h6, h12]) => ({ heart_rate_6h: noneIfMinus1(h6), heart_rate_12h: noneIfMinus1(h12) }) },
  "glucose-latest": { plan: V1_PLANS.task7!, report: ([g]) => ({ glucose_latest: noneIfMinus1(g) }) },
  "glucose-mean": { plan: V1_PLANS.task6!, report: ([g]) => ({ glucose_mean_24h: noneIfMinus1(g) }) },
};

const noneIfMinus1 = (v: unknown) => (v === -1 ? null : v);

class RuleDone {
  constructor(readonly answer: unknown[]) {}
}

export const reviewPlan: Plan = (ctx) => {
  const rules = ctx.task.rules ?? [];
  const read = new Map<string, FhirResource[]>();
  const posts: [string, FhirResource][] = [];
  const sub: PlanContext = {
    task: ctx.task,
    get budget() {
      return ctx.budget - posts.length;
    },
    canSearch: (type) => ctx.canSearch(type),
    search(type, params) {
      const key = `${type}?${JSON.stringify(params)}`;
      let hits = read.get(key);
      if (!hits) read.set(key, (hits = ctx.search(type, params)));
      return hits;
    },
    post: (type, body) => void posts.push([type, body]),
    calculate: (expression, expected) => ctx.calculate(expression, expected),
    finish(answer) {
      throw new RuleDone(answer);
    },
  };
  const report: Record<string, unknown> = {};
  for (const rule of rules) {
    const r = RULE_PLANS[rule];
    if (!r) throw new ExpertError(`no expert plan for the workflows rule ${rule}`);
    try {
      r.plan(sub);
      throw new ExpertError(`the ${rule} plan returned without finishing`);
    } catch (signal) {
      if (!(signal instanceof RuleDone)) throw signal;
      if (r.report) Object.assign(report, r.report(signal.answer));
    }
  }
  for (const [type, body] of posts) ctx.post(type, body);
  return ctx.finish(Object.keys(report).length ? [report] : []);
};
