import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EmbeddedBackend, EnvConfig, MedAgentEnv } from "../../env/core/index.ts";
import { API_BASE, MRNS, service, smallStore, solGrader, task, vitalsPost } from "./fixtures.ts";

// Many concurrent episodes write to and read the same patients: each sees exactly its own writes,
// no episode sees another's, and the base never changes.
describe("episode isolation", () => {
  const store = smallStore();
  const config = new EnvConfig({ backend: new EmbeddedBackend(store, service(store)), grader: solGrader() });
  const baseCounts = MRNS.map((m) => store.search("Observation", `patient=${m}`).total);

  const op = fc.oneof(
    fc.record({ kind: fc.constant("post" as const), patient: fc.integer({ min: 0, max: 2 }) }),
    fc.record({ kind: fc.constant("get" as const), patient: fc.integer({ min: 0, max: 2 }) }),
  );
  const episode = fc.record({ ops: fc.array(op, { maxLength: 7 }), end: fc.constantFrom("finish", "invalid", "limit", "open") });

  it("holds for random interleavings of concurrent episodes", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(episode, { minLength: 2, maxLength: 8 }), fc.array(fc.nat(), { maxLength: 80 }), async (episodes, schedule) => {
        const envs = episodes.map(() => new MedAgentEnv(config));
        await Promise.all(envs.map((env, i) => env.reset({ task: task(`iso-${i}`), maxRounds: episodes[i]!.end === "limit" ? Math.max(1, episodes[i]!.ops.length) : 50 })));
        const written = episodes.map(() => [0, 0, 0]);
        const cursor = episodes.map(() => 0);
        // Interleave the episodes' steps in the order the schedule picks, then run what is left.
        const order = [...schedule.map((s) => s % episodes.length), ...episodes.flatMap((e, i) => e.ops.map(() => i))];
        // Steps of different episodes interleave; one episode's steps run in order (as a client would send them).
        for (const i of order) {
          await (async () => {
            const ep = episodes[i]!;
            const k = cursor[i]!++;
            if (k >= ep.ops.length || envs[i]!.info!.status !== "running") return;
            const o = ep.ops[k]!;
            const mrn = MRNS[o.patient]!;
            if (o.kind === "post") {
              await envs[i]!.step(vitalsPost(mrn, `${i}/${k}`));
              written[i]![o.patient]!++;
            } else {
              const s = await envs[i]!.step(`GET ${API_BASE}Observation?patient=${mrn}&_count=5000`);
              if (s.info.status !== "running" && s.info.status !== "limit_reached") return;
              const reply = s.observation[0]!.content!;
              expect(reply).toMatch(/"total": \d+/);
              const total = Number(/"total": (\d+)/.exec(reply)![1]);
              expect(total).toBe(baseCounts[o.patient]! + written[i]![o.patient]!);
              // Only this episode's own values appear among the vital signs.
              for (const m of reply.matchAll(/"valueString": "(\d+)\/\d+"/g)) expect(Number(m[1])).toBe(i);
            }
          })();
        }
        await Promise.all(
          envs.map(async (env, i) => {
            if (env.info!.status !== "running") return;
            const end = episodes[i]!.end;
            if (end === "finish") await env.step("FINISH([])");
            else if (end === "invalid") await env.step("nonsense");
            else await env.close();
          }),
        );
        MRNS.forEach((m, p) => expect(store.search("Observation", `patient=${m}`).total).toBe(baseCounts[p]));
      }),
      { numRuns: 60, seed: 42 },
    );
  });
});
