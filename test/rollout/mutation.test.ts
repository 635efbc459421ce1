// Mutation suite: perturbations of the expert's text-protocol trajectories, replayed through the
// real environment and graders; each must keep or flip the verdict exactly as GRADERS.md says.
import { beforeAll, describe, expect, it } from "vitest";
import { agentTurns, type EnvConfig, type Policy } from "../../env/core/index.ts";
import { generateStore } from "../../env/ehr/index.ts";
import { generateTasks, type Task } from "../../env/tasks/index.ts";
import type { EpisodeRow } from "../../rollout/index.ts";
import { parseTextReply } from "../../rollout/expert/text.ts";
import { casesFor, trajectory, type MutationCase, type Trajectory } from "./mutations.ts";
import { envConfig, explain, play } from "./world.ts";

interface Planned {
  task: Task;
  base: Trajectory;
  mutation: MutationCase;
  turns: string[];
  expected: 0 | 1;
}

/** Plays the turns planned for each (renamed) task. */
function replayPolicy(turnsById: Map<string, string[]>): Policy {
  return {
    name: "mutation",
    act: async ({ task, messages }) => {
      const turns = turnsById.get(task.id)!;
      const played = messages.filter((m) => m.role === "assistant").length;
      const turn = turns[played];
      if (turn === undefined) throw new Error(`no turn ${played} planned for ${task.id}`);
      return turn;
    },
  };
}

describe("mutation suite (text protocol)", () => {
  let config: EnvConfig;
  let planned: Planned[];
  let rows: Map<string, EpisodeRow>;

  beforeAll(async () => {
    const { store } = generateStore({ seed: 11, patients: 40 });
    config = envConfig(store);
    // One task per (suite, type, branch): every grading branch the generator covers.
    const all = (["mab-v1", "mab-v2"] as const).flatMap((suite) => generateTasks(store, { suite, perType: 16, seed: 5 }));
    const seen = new Set<string>();
    const tasks = all.filter((t) => {
      const k = `${t.suite}/${t.type}/${t.branch}`;
      if (seen.has(k) || (t.type === "v2_task9" && t.branch === "no-k")) return false;
      seen.add(k);
      return true;
    });
    const expertRows = await play(config, tasks, "text");
    const failed = expertRows.filter((r) => r.reward !== 1);
    if (failed.length > 0) throw new Error(`the expert must pass before it is mutated:\n${explain(failed)}`);
    planned = [];
    expertRows.forEach((row, i) => {
      const task = tasks.find((t) => t.id === row.task_id && t.suite === row.suite)!;
      const seen = row.messages.flatMap((m, k) => {
        const prev = row.messages[k - 1];
        if (m.role !== "user" || prev?.role !== "assistant" || !prev.content?.startsWith("GET")) return [];
        const reply = parseTextReply(m.content ?? "");
        return reply.ok ? ((reply.json as { entry?: { resource: Record<string, unknown> }[] }).entry ?? []).map((e) => e.resource) : [];
      });
      const base = trajectory(task, agentTurns(row.messages, "text") as string[], seen);
      casesFor(base).forEach((mutation, j) => {
        planned.push({ task: { ...task, id: `${task.id}#${i}.${j}` }, base, mutation, turns: mutation.apply(base), expected: mutation.expect(base) });
      });
    });
    const turnsById = new Map(planned.map((p) => [p.task.id, p.turns]));
    const played = await play(config, planned.map((p) => p.task), "text", replayPolicy(turnsById));
    rows = new Map(played.map((r) => [r.task_id, r]));
  });

  it("has at least 8 perturbations for every task type of both suites", () => {
    const byType = new Map<string, Set<string>>();
    for (const p of planned) {
      const k = `${p.task.suite}/${p.task.type}`;
      byType.set(k, (byType.get(k) ?? new Set()).add(p.mutation.name));
    }
    expect(byType.size).toBe(23);
    for (const [type, names] of byType) expect(names.size, type).toBeGreaterThanOrEqual(8);
  });

  it("every perturbation keeps or flips the verdict as its rule says", () => {
    const wrong = planned
      .filter((p) => rows.get(p.task.id)!.reward !== p.expected)
      .map((p) => {
        const r = rows.get(p.task.id)!;
        const failed = r.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`);
        return `${p.task.suite}/${p.task.type} [${p.task.branch}] "${p.mutation.name}" (rule: ${p.mutation.rule}) expected ${p.expected}, got ${r.reward} [${r.status}] ${failed.join("; ")}`;
      });
    expect(wrong, wrong.join("\n")).toEqual([]);
  });

  it("includes window-boundary cases (a window one day off) for the windowed queries", () => {
    const windowed = planned.filter((p) => /one day/.test(p.mutation.name)).map((p) => `${p.task.suite}/${p.task.type}`);
    expect(new Set(windowed)).toEqual(new Set(["mab-v1/task4", "mab-v1/task6", "mab-v2/task3"]));
  });

  it("covers both verdicts for every task type", () => {
    const verdicts = new Map<string, Set<number>>();
    for (const p of planned) {
      const k = `${p.task.suite}/${p.task.type}`;
      verdicts.set(k, (verdicts.get(k) ?? new Set()).add(p.expected));
    }
    for (const [type, v] of verdicts) expect([...v].sort(), type).toEqual([0, 1]);
  });
});
