// Runs queued jobs in arrival order, in slices of a few milliseconds with a turn of the event loop
// between them. A burst of requests handled in one go (Node handles every body that arrived in one
// poll before it looks at timers) holds up the replies already due: at 256 episodes in flight the
// stand-in's delayed replies went out 50-175 ms late (p90). Between slices, due timers fire and
// sockets are read. Jobs must not throw (the stand-in's handler answers every error itself).
export class WorkQueue {
  private readonly jobs: ((() => void) | undefined)[] = [];
  private head = 0;
  private scheduled = false;

  constructor(private readonly sliceMs = 2) {}

  push(job: () => void): void {
    this.jobs.push(job);
    if (!this.scheduled) this.schedule();
  }

  private schedule(): void {
    this.scheduled = true;
    setImmediate(this.run);
  }

  private readonly run = (): void => {
    this.scheduled = false;
    const until = performance.now() + this.sliceMs;
    while (this.head < this.jobs.length) {
      const job = this.jobs[this.head]!;
      this.jobs[this.head++] = undefined;
      job();
      if (performance.now() >= until) break;
    }
    if (this.head === this.jobs.length) {
      this.jobs.length = 0;
      this.head = 0;
    } else this.schedule();
  };
}
