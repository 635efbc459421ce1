// The stand-in's mix at its default error rate, end to end: real episodes of both suites through the real
// environment and the real openai client over loopback HTTP. A real teacher passes 55-75% of such
// episodes (gpt-4o-mini 58%, after SFT 72%); every task type must appear among the correct ones,
// and every kind of mistake among the wrong ones.
import type OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvConfig } from "../../env/core/index.ts";
import type { Task } from "../../env/tasks/index.ts";
import { startTeacherServer, type TeacherServer } from "../../rollout/teacher/index.ts";
import { MISTAKES } from "../../rollout/teacher/mistakes.ts";
import { about, client, environment, MODEL, world } from "./teacher-world.ts";

const SAMPLES = 2;
let config: EnvConfig;
let tasks: Task[];
let server: TeacherServer;

beforeAll(async () => {
  ({ config, tasks } = world({ patients: 16, seed: 11, perType: 8 }));
  server = await startTeacherServer({ tasks, seed: 2026 });
});
afterAll(async () => {
  await server.close();
});

/** The openai client, noting what the stand-in says each turn did, per episode. */
function noting(c: OpenAI, turns: Map<string, string[]>): OpenAI {
  const create = c.chat.completions.create.bind(c.chat.completions) as (...a: unknown[]) => Promise<unknown>;
  (c.chat.completions as unknown as { create: unknown }).create = async (...args: unknown[]) => {
    const res = await create(...args);
    const body = (args[0] as { messages: { content?: unknown }[] }).messages;
    const key = JSON.stringify(body.slice(0, 2).map((m) => m.content));
    const list = turns.get(key) ?? [];
    list.push(about(res).turn);
    turns.set(key, list);
    return res;
  };
  return c;
}

describe("the stand-in's mix at the default error rate (0.35)", () => {
  for (const protocol of ["text", "tools"] as const) {
    it(`${protocol} protocol: pass rate in 55-75%, every type among the correct episodes, every mistake made`, async () => {
      const env = environment(config, protocol);
      const turns = new Map<string, string[]>();
      const c = noting(client(server.url), turns);
      const jobs = tasks.flatMap((t) => Array.from({ length: SAMPLES }, () => t));
      const rewards: { task: Task; reward: number; status: string }[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < jobs.length) {
            const task = jobs[next++]!;
            const r = await env.rollout(c, MODEL, task);
            rewards.push({ task, reward: r.reward, status: r.state.status });
          }
        }),
      );
      const correct = rewards.filter((r) => r.reward === 1);
      const rate = correct.length / rewards.length;
      const types = new Set(tasks.map((t) => `${t.suite}/${t.type}`));
      const correctTypes = new Set(correct.map((r) => `${r.task.suite}/${r.task.type}`));
      const made = new Set([...turns.values()].flat());
      console.log(`${protocol}: ${correct.length}/${rewards.length} correct (${(100 * rate).toFixed(1)}%), ${correctTypes.size}/${types.size} types; turns: ${[...made].sort().join(", ")}`);
      expect(rewards).toHaveLength(tasks.length * SAMPLES);
      expect(rate).toBeGreaterThanOrEqual(0.55);
      expect(rate).toBeLessThanOrEqual(0.75);
      expect([...types].filter((t) => !correctTypes.has(t))).toEqual([]);
      expect(types.size).toBe(23);
      const expected = MISTAKES.filter((m) => protocol === "tools" || m !== "malformed_call");
      expect(expected.filter((m) => !made.has(m))).toEqual([]);
      // Both ways of failing are there: invalid actions, and completed episodes the grader rejects.
      expect(rewards.some((r) => r.status === "invalid_action")).toBe(true);
      expect(rewards.some((r) => r.status === "completed" && r.reward === 0)).toBe(true);
    });
  }
});
