// Requests being answered (HTTP requests and /ws messages): what a drain waits for. Open episodes
// between steps are not requests: a stop waits for none of them.
export class InFlight {
  private count = 0;
  private waiters: (() => void)[] = [];

  get size(): number {
    return this.count;
  }

  begin(): void {
    this.count++;
  }

  end(): void {
    if (--this.count === 0) for (const resolve of this.waiters.splice(0)) resolve();
  }

  /** Resolves once nothing is in flight. */
  idle(): Promise<void> {
    return this.count === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}
