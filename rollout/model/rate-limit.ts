// Client-side request and token rate limits (--rpm, --tpm): token buckets refilled continuously,
// with a per-minute capacity. Waiters are served in arrival order.
import { sleep } from "./backoff.ts";

/** Where time comes from (a test passes a clock it advances itself). */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

const REAL_CLOCK: Clock = { now: () => performance.now(), sleep };

export class TokenBucket {
  private level: number;
  private last: number;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly perMinute: number,
    private readonly clock: Clock = REAL_CLOCK,
  ) {
    this.level = perMinute;
    this.last = clock.now();
  }

  private refill(): void {
    const now = this.clock.now();
    this.level = Math.min(this.perMinute, this.level + ((now - this.last) * this.perMinute) / 60_000);
    this.last = now;
  }

  /** Waits until `amount` (capped at the bucket size) is available, then takes it. */
  take(amount: number, signal?: AbortSignal): Promise<void> {
    const want = Math.min(amount, this.perMinute);
    const turn = this.queue.then(async () => {
      for (;;) {
        this.refill();
        if (this.level >= want) {
          this.level -= want;
          return;
        }
        await this.clock.sleep(((want - this.level) * 60_000) / this.perMinute, signal);
      }
    });
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  /** Settles an estimate against the real amount (may go negative: later takers wait). */
  adjust(delta: number): void {
    this.refill();
    this.level = Math.min(this.perMinute, this.level - delta);
  }
}

export class RateLimiter {
  private readonly requests?: TokenBucket;
  private readonly tokens?: TokenBucket;

  constructor(limits: { rpm?: number; tpm?: number }, clock: Clock = REAL_CLOCK) {
    if (limits.rpm) this.requests = new TokenBucket(limits.rpm, clock);
    if (limits.tpm) this.tokens = new TokenBucket(limits.tpm, clock);
  }

  async acquire(estimatedTokens: number, signal?: AbortSignal): Promise<void> {
    await this.requests?.take(1, signal);
    await this.tokens?.take(estimatedTokens, signal);
  }

  settle(estimatedTokens: number, actualTokens: number): void {
    this.tokens?.adjust(actualTokens - estimatedTokens);
  }
}
