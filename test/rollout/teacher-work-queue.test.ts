// The stand-in's work queue: every job runs once, in order, and a burst of slow jobs does not hold up
// timers that fall due while it runs (the stand-in's delayed replies).
import { describe, expect, it } from "vitest";
import { WorkQueue } from "../../rollout/teacher/work-queue.ts";

const spin = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

describe("WorkQueue", () => {
  it("runs every job once, in the order pushed, including jobs pushed while it runs", async () => {
    const q = new WorkQueue(2);
    const ran: number[] = [];
    await new Promise<void>((resolve) => {
      for (let i = 0; i < 50; i++)
        q.push(() => {
          ran.push(i);
          if (i === 10) q.push(() => ran.push(100));
          if (i === 49) setImmediate(() => setImmediate(resolve));
        });
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(ran).toEqual([...Array.from({ length: 50 }, (_, i) => i), 100]);
  });

  it("lets a due timer fire between slices of a burst, not after the whole burst", async () => {
    const q = new WorkQueue(2);
    const events: string[] = [];
    const done = new Promise<void>((resolve) => {
      // Each job takes longer than a slice, so every slice is one job and the loop turns between jobs.
      for (let i = 0; i < 20; i++)
        q.push(() => {
          spin(3);
          events.push(`job ${i}`);
          if (i === 19) resolve();
        });
    });
    setTimeout(() => events.push("timer"), 0);
    await done;
    const timerAt = events.indexOf("timer");
    expect(timerAt).toBeGreaterThan(0);
    expect(timerAt).toBeLessThan(5);
    expect(events.filter((e) => e.startsWith("job"))).toEqual(Array.from({ length: 20 }, (_, i) => `job ${i}`));
  });
});
