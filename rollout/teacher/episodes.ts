// Which episode a request belongs to. A conversation is identified by its messages (canonical digests):
// the state an episode reaches after a turn waits under the digest of the conversation up to and
// including that assistant turn, which is the prefix the episode's next request starts with. Identical
// prefixes (two samples of a task that have acted alike so far) queue their states and take them in
// order. First turns draw a new plan per request (the n-th request of a prompt is its n-th sample).
// Replies are remembered by request digest so a retried request gets the same answer and moves nothing.
import { Rng } from "../../env/util/index.ts";
import type { Protocol } from "../../env/protocol/index.ts";
import { LRUCache } from "lru-cache";
import { drawPlan } from "./mistakes.ts";
import type { EpisodeState } from "./player.ts";

export class EpisodeBook<R extends object> {
  // Bounds on what is remembered (old entries are evicted first).
  private readonly samples = new LRUCache<string, number>({ max: 100_000 });
  private readonly waiting = new LRUCache<string, EpisodeState[]>({ max: 100_000 });
  private readonly replies = new LRUCache<string, R>({ max: 20_000 });

  constructor(readonly options: { seed: number; errorRate: number }) {}

  /** A new episode of the prompt: its sample number among the prompt's first turns seen, and its plan. */
  start(promptKey: string, protocol: Protocol): { sample: number; state: EpisodeState } {
    const sample = this.samples.get(promptKey) ?? 0;
    this.samples.set(promptKey, sample + 1);
    const plan = drawPlan(Rng.derive(this.options.seed, `${promptKey}#${sample}`), this.options.errorRate, protocol);
    return { sample, state: { id: `${promptKey}#${sample}`, plan, ops: "", applied: plan.mistake === null } };
  }

  /** The state of an episode whose conversation so far (up to its last assistant turn) has this digest. */
  take(prefixKey: string): EpisodeState | undefined {
    const queue = this.waiting.get(prefixKey);
    const state = queue?.shift();
    if (queue && queue.length === 0) this.waiting.delete(prefixKey);
    return state;
  }

  park(prefixKey: string, state: EpisodeState): void {
    const queue = this.waiting.get(prefixKey);
    if (queue) queue.push(state);
    else this.waiting.set(prefixKey, [state]);
  }

  reply(requestKey: string): R | undefined {
    return this.replies.get(requestKey);
  }

  remember(requestKey: string, reply: R): void {
    this.replies.set(requestKey, reply);
  }
}
