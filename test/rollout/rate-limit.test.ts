// --rpm/--tpm token buckets on a clock the test advances: who waits, and for how long.
import { describe, expect, it } from "vitest";
import { RateLimiter, TokenBucket, type Clock } from "../../rollout/model/rate-limit.ts";

function fakeClock(): Clock & { t: number; slept: number[] } {
  const c = {
    t: 0,
    slept: [] as number[],
    now: () => c.t,
    sleep: async (ms: number) => {
      c.slept.push(ms);
      c.t += ms;
    },
  };
  return c;
}

describe("token buckets", () => {
  it("lets a full minute's worth through at once, then paces at the per-minute rate", async () => {
    const clock = fakeClock();
    const bucket = new TokenBucket(60, clock);
    for (let i = 0; i < 60; i++) await bucket.take(1);
    expect(clock.slept).toEqual([]);
    await bucket.take(1);
    expect(clock.t).toBeCloseTo(1000, 6); // one request per second at 60 rpm
    await bucket.take(2);
    expect(clock.t).toBeCloseTo(3000, 6);
  });

  it("refills with elapsed time, never above the bucket size", async () => {
    const clock = fakeClock();
    const bucket = new TokenBucket(600, clock);
    await bucket.take(600);
    clock.t += 120_000; // two minutes idle: the bucket holds 600, not 1,200
    await bucket.take(600);
    expect(clock.slept).toEqual([]);
    await bucket.take(10);
    expect(clock.t).toBeCloseTo(121_000, 6);
  });

  it("a token estimate settled against the real usage charges the difference", async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ rpm: 1000, tpm: 6000 }, clock);
    await limiter.acquire(1000);
    limiter.settle(1000, 6000); // the request used 5,000 more than estimated: the bucket is empty
    await limiter.acquire(600);
    expect(clock.t).toBeCloseTo(6000, 6); // 600 tokens at 100 per second
  });

  it("serves waiters in arrival order", async () => {
    const clock = fakeClock();
    const bucket = new TokenBucket(60, clock);
    await bucket.take(60);
    const order: number[] = [];
    await Promise.all([1, 2, 3].map((i) => bucket.take(1).then(() => order.push(i))));
    expect(order).toEqual([1, 2, 3]);
    expect(clock.t).toBeCloseTo(3000, 6);
  });
});
