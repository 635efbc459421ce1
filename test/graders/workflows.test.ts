// The workflows checkpoints: per rule, transcripts whose verdict follows from the rule as restated
// (passing, that checkpoint failing, an extra order for another rule, a clashing write), the
// reported values, the resulting chart, and the property that removing any one required order from
// an expert transcript fails exactly that order's checkpoint.
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { MedAgentEnv, type EnvConfig } from "../../env/core/index.ts";
import { generateStore } from "../../env/ehr/index.ts";
import type { FhirStore } from "../../env/fhir/index.ts";
import { grade, identifiesOrder, type GradeResult } from "../../env/graders/index.ts";
import type { Action } from "../../env/protocol/index.ts";
import { fromJs } from "../../env/python/index.ts";
import { generateTasks, type Task, WORKFLOW_RULES, workflowRule } from "../../env/tasks/index.ts";
import { createExpertPolicy } from "../../rollout/index.ts";
import { API_BASE, envConfig } from "../rollout/world.ts";

const ACCEPTED = "POST request accepted and executed successfully. Please call FINISH if you have got answers for all the questions and finished all the requested tasks";

interface Played {
  task: Task;
  turns: string[];
  actions: Action[];
  result: string;
}

let store: FhirStore;
let config: EnvConfig;
let played: Played[];

async function play(task: Task, turns?: string[]): Promise<{ record: ReturnType<MedAgentEnv["record"]>; turns: string[] }> {
  const env = new MedAgentEnv(config);
  const expert = createExpertPolicy({ apiBase: API_BASE });
  await env.reset({ task, protocol: "text" });
  const sent: string[] = [];
  while (env.info!.status === "running") {
    const turn = turns ? turns[sent.length]! : ((await expert.act({ task, protocol: "text", messages: env.record().messages })) as string);
    sent.push(turn);
    await env.step(turn);
  }
  return { record: env.record(), turns: sent };
}

beforeAll(async () => {
  ({ store } = generateStore({ seed: 7, patients: 40 }));
  config = envConfig(store);
  const tasks = generateTasks(store, { suite: "workflows", perType: 60, seed: 3 });
  played = [];
  for (const task of tasks) {
    const { record, turns } = await play(task);
    expect(record.info.reward, task.id).toBe(1);
    played.push({ task, turns, actions: record.actions, result: record.info.result! });
  }
});

const post = (type: string, body: unknown): Action => ({ kind: "POST", raw: `POST ${API_BASE}${type}\n${JSON.stringify(body)}`, url: `${API_BASE}${type}`, body, accepted: true, reply: ACCEPTED });
const finish = (answer: string): Action => ({ kind: "FINISH", raw: `FINISH(${answer})` });

function gradeOf(task: Task, actions: Action[], result: string): GradeResult {
  return grade({ task, protocol: "text", status: "completed", actions, result, base: store, apiBase: API_BASE });
}

const failed = (g: GradeResult) => g.checkpoints!.filter((c) => !c.ok).map((c) => c.rule);
const posts = (p: Played) => p.actions.filter((a) => a.kind === "POST");
/** The rule of `p`'s review an order belongs to. */
const ownerOf = (a: Action, p: Played) => p.task.rules!.find((r) => identifiesOrder(r, fromJs(a.body)));
const needs = (p: Played, rule: string) => workflowRule(rule).state(store, p.task.eval_MRN!, p.task.clock!).needsOrder;
/** An order `rule`'s expert placed somewhere, re-addressed to `mrn`. */
function someOrder(rule: string, mrn: string): Action {
  for (const p of played)
    for (const a of posts(p))
      if (ownerOf(a, p) === rule) {
        const body = { ...(a.body as Record<string, unknown>), subject: { reference: `Patient/${mrn}` } };
        return post(a.url!.slice(API_BASE.length), body);
      }
  throw new Error(`no expert order for ${rule}`);
}
/** `extra` inserted before the FINISH. */
const withPosts = (p: Played, extra: Action[], keep = (_a: Action) => true): Action[] => [...p.actions.slice(0, -1).filter(keep), ...extra, p.actions.at(-1)!];

const ORDER_RULES = WORKFLOW_RULES.filter((r) => r.kind === "order").map((r) => r.id);

describe("workflows checkpoints", () => {
  it("the expert's transcripts pass every checkpoint, one checkpoint per rule asked, named per rule", () => {
    for (const p of played) {
      const g = gradeOf(p.task, p.actions, p.result);
      expect(g.reward).toBe(1);
      expect(g.partialCredit).toBe(1);
      expect(g.checkpoints!.map((c) => c.rule)).toEqual(p.task.rules);
      for (const c of g.checkpoints!) expect(c.source).toMatch(/^mab-v[12] task\d+$/);
      for (const c of g.checks) expect(p.task.rules!.some((r) => c.name.startsWith(`${r}: `))).toBe(true);
    }
  });

  describe.each(ORDER_RULES)("%s", (rule) => {
    const asked = () => played.filter((p) => p.task.rules!.includes(rule));

    it("needed: without its orders only this checkpoint fails", () => {
      const cases = asked().filter((p) => needs(p, rule));
      expect(cases.length).toBeGreaterThan(0);
      for (const p of cases) {
        const g = gradeOf(p.task, withPosts(p, [], (a) => a.kind !== "POST" || ownerOf(a, p) !== rule), p.result);
        expect(failed(g), p.task.id).toEqual([rule]);
        expect(g.partialCredit).toBeCloseTo((p.task.rules!.length - 1) / p.task.rules!.length);
        expect(g.checks.some((c) => !c.ok && c.name.startsWith(`${rule}: `))).toBe(true);
      }
    });

    it("not needed: an order for it fails only this checkpoint", () => {
      const cases = asked().filter((p) => !needs(p, rule));
      expect(cases.length).toBeGreaterThan(0);
      for (const p of cases) expect(failed(gradeOf(p.task, withPosts(p, [someOrder(rule, p.task.eval_MRN!)]), p.result)), p.task.id).toEqual([rule]);
    });

    it("an extra order for a rule the review does not ask for changes no verdict (rules that clash never share a review)", () => {
      const clash = [rule, ...(workflowRule(rule).conflicts ?? [])];
      for (const p of played.filter((q) => !q.task.rules!.some((r) => clash.includes(r))).slice(0, 5)) expect(gradeOf(p.task, withPosts(p, [someOrder(rule, p.task.eval_MRN!)]), p.result).reward).toBe(1);
    });
  });

  it("exactly-one rules: a second copy of the order fails that checkpoint alone", () => {
    for (const rule of ["ct-follow-up", "naloxone", "flu-vaccine", "covid-booster", "magnesium", "a1c"]) {
      const p = played.find((q) => q.task.rules!.includes(rule) && needs(q, rule))!;
      const copy = posts(p).find((a) => ownerOf(a, p) === rule)!;
      expect(failed(gradeOf(p.task, withPosts(p, [copy]), p.result)), rule).toEqual([rule]);
    }
  });

  it("clashing writes: each rule counts only its own orders", () => {
    // The source rules say "exactly one accepted POST"; in a review with other orders they still pass.
    const crowded = played.filter((p) => p.task.rules!.some((r) => ["naloxone", "flu-vaccine", "covid-booster", "a1c", "magnesium"].includes(r) && needs(p, r)) && posts(p).length >= 2);
    expect(crowded.length).toBeGreaterThan(0);
    for (const p of crowded) expect(gradeOf(p.task, p.actions, p.result).reward).toBe(1);
    // DVT's "some stopped MedicationRequest" is not met by stopping a QT drug (qtc's order).
    const dvt = played.find((p) => p.task.rules!.includes("dvt-prophylaxis") && /dvt-prophylaxis=stop-duplicates/.test(p.task.branch!))!;
    const stopQt = { ...(someOrder("qtc", dvt.task.eval_MRN!).body as object), resourceType: "MedicationRequest", status: "stopped", medicationCodeableConcept: { text: "ondansetron 4 mg tablet" } };
    const g = gradeOf(dvt.task, withPosts(dvt, [post("MedicationRequest", stopQt)], (a) => a.kind !== "POST" || ownerOf(a, dvt) !== "dvt-prophylaxis"), dvt.result);
    expect(failed(g)).toEqual(["dvt-prophylaxis"]);
    expect(g.checks.find((c) => c.name === "dvt-prophylaxis: discontinue")?.ok).toBe(false);
  });

  it("reported values: each key is its own checkpoint; an object, or a list holding it or its JSON text", () => {
    const p = played.find((q) => q.task.rules!.includes("age") && q.task.rules!.includes("heart-rate"))!;
    const report = JSON.parse(p.result) as Record<string, unknown>;
    const at = (answer: string) => gradeOf(p.task, [...p.actions.slice(0, -1), finish(answer)], answer);
    expect(at(JSON.stringify([report])).reward).toBe(1);
    expect(at(JSON.stringify([JSON.stringify(report)])).reward).toBe(1);
    expect(failed(at(JSON.stringify({ ...report, age: (report.age as number) + 1 })))).toEqual(["age"]);
    const { age: _age, ...noAge } = report;
    expect(failed(at(JSON.stringify(noAge)))).toEqual(["age"]);
    const reports = p.task.rules!.filter((r) => workflowRule(r).kind === "report");
    expect(failed(at("not json"))).toEqual(reports);
    expect(failed(at("[1, 2]"))).toEqual(reports);
  });

  it("an order the log accepted but the chart never received fails its checkpoint (writes execute)", async () => {
    const p = played.find((q) => q.task.rules!.includes("naloxone") && needs(q, "naloxone"))!;
    // The same turns, the naloxone order sent to a resource type the server does not know.
    const turns = p.turns.map((t) => (t.startsWith("POST ") && /naloxone/i.test(t) ? t.replace(`${API_BASE}MedicationRequest`, `${API_BASE}MedicationRequestX`) : t));
    const { record } = await play(p.task, turns);
    expect(record.info.checkpoints!.filter((c) => !c.ok).map((c) => c.rule)).toEqual(["naloxone"]);
    expect(record.info.checks!.find((c) => c.name === "naloxone: in chart")?.ok).toBe(false);
  });

  it("property: removing any one required order from an expert transcript fails exactly that order's checkpoint", () => {
    const withOrders = played.filter((p) => posts(p).length > 0);
    fc.assert(
      fc.property(fc.nat(), fc.nat(), (i, j) => {
        const p = withOrders[i % withOrders.length]!;
        const orders = posts(p);
        const gone = orders[j % orders.length]!;
        const rule = ownerOf(gone, p)!;
        const g = gradeOf(p.task, p.actions.filter((a) => a !== gone), p.result);
        // DVT and QTc stop every other anticoagulant / QT drug, where the rule needs one stop (DVT's "create"
        // branch, one non-heparin anticoagulant, needs none): such a stop is not a required order.
        const stops = orders.filter((a) => ownerOf(a, p) === rule && (a.body as { status?: string }).status === "stopped");
        const noStopNeeded = rule === "dvt-prophylaxis" && workflowRule(rule).state(store, p.task.eval_MRN!, p.task.clock!).branch === "create";
        const spare = (gone.body as { status?: string }).status === "stopped" && (stops.length > 1 || noStopNeeded);
        expect(failed(g)).toEqual(spare ? [] : [rule]);
      }),
      { numRuns: 300, seed: 41 },
    );
  });
});
