// Open episodes by id: capacity limit, idle TTL eviction, one step at a time per episode.
import { randomUUID } from "node:crypto";
import type { EpisodeEnv, EpisodeInfo } from "../core/index.ts";
import type { Protocol } from "../protocol/index.ts";
import type { Task } from "../tasks/index.ts";
import { HttpError } from "./errors.ts";

/** The 404 code of an episode this replica does not hold: the client re-opens it or gives up, the server never starts one. */
export const UNKNOWN_EPISODE = "unknown_episode";

/** `<replica>-<uuid>`: an id a replica made (client-chosen ids may look like anything else). */
const SERVER_MADE_ID = /^[A-Za-z0-9_.]+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface Episode {
  readonly id: string;
  readonly env: EpisodeEnv;
  readonly task: Task;
  readonly protocol: Protocol;
  readonly createdAt: number;
  lastUsed: number;
  steps: number;
  done: boolean;
  info: EpisodeInfo;
  /** Steps of one episode run one after another, in arrival order. */
  tail: Promise<unknown>;
}

export interface RegistryOptions {
  /** Episodes kept at once (running + finished-but-not-deleted). */
  maxEpisodes: number;
  /** Episodes untouched this long are dropped; 0 disables. */
  idleTtlMs: number;
  /** Finished episodes are kept this long after their last request (for GET), then dropped; 0: like idleTtlMs. */
  finishedTtlMs?: number;
  /** Prefix of every episode id, so a load balancer can route by id. */
  replicaId: string;
  onEvict?: (episode: Episode) => void;
}

export class EpisodeRegistry {
  private readonly episodes = new Map<string, Episode>();
  /** Finished episodes in finish order: the first to go when the server is full. */
  private readonly finished = new Set<string>();
  private sweeper?: NodeJS.Timeout;
  private readonly prefix: string;

  constructor(private readonly options: RegistryOptions) {
    this.prefix = `${options.replicaId}-`;
    const ttls = [options.idleTtlMs, options.finishedTtlMs ?? 0].filter((t) => t > 0);
    if (ttls.length > 0) {
      this.sweeper = setInterval(() => this.sweep(), Math.max(50, Math.min(Math.min(...ttls) / 2, 30_000)));
      this.sweeper.unref();
    }
  }

  get open(): number {
    return this.episodes.size - this.finished.size;
  }
  get retained(): number {
    return this.finished.size;
  }
  get size(): number {
    return this.episodes.size;
  }

  /** Reserve room for one more episode (evicting finished, then idle ones) or throw 503. */
  ensureRoom(): void {
    if (this.episodes.size < this.options.maxEpisodes) return;
    const oldestFinished = this.finished.values().next();
    if (!oldestFinished.done) {
      this.evict(this.episodes.get(oldestFinished.value)!);
      return;
    }
    this.sweep();
    if (this.episodes.size >= this.options.maxEpisodes) {
      throw new HttpError(503, `too many open episodes (limit ${this.options.maxEpisodes}); DELETE finished ones or raise --max-episodes`, undefined, {
        "Retry-After": "1",
      });
    }
  }

  /** The client's chosen id (409 while an episode holds it), else a fresh one of this replica. */
  newId(chosen?: string): string {
    if (chosen !== undefined) {
      this.assertFree(chosen);
      return chosen;
    }
    // randomUUID draws from a cached entropy pool: cheaper per call than randomBytes.
    return this.prefix + randomUUID();
  }

  add(episode: Episode): void {
    this.assertFree(episode.id);
    this.ensureRoom();
    this.episodes.set(episode.id, episode);
  }

  private assertFree(id: string): void {
    const held = this.episodes.get(id);
    if (held && !this.expired(held, Date.now())) {
      throw new HttpError(409, `episode_id: ${JSON.stringify(id)} is already an open episode on this replica; choose another id`, "episode_id", {}, "episode_exists");
    }
  }

  /** The episode, or 404 `unknown_episode` (naming another replica when the id carries its prefix); never a new episode. */
  get(id: string): Episode {
    const episode = this.episodes.get(id);
    if (episode && !this.expired(episode, Date.now())) return episode;
    if (episode) this.evict(episode);
    const here = this.options.replicaId;
    if (!id.startsWith(this.prefix) && SERVER_MADE_ID.test(id)) {
      throw new HttpError(404, `episode ${id} not found here: its id belongs to replica "${id.slice(0, id.indexOf("-"))}", this is "${here}"`, "episode_id", {}, UNKNOWN_EPISODE);
    }
    throw new HttpError(404, `episode ${id} not found on replica "${here}" (unknown, deleted or evicted after idling)`, "episode_id", {}, UNKNOWN_EPISODE);
  }

  markFinished(episode: Episode): void {
    episode.done = true;
    this.finished.add(episode.id);
  }

  /** Remove and close; false when unknown. */
  delete(id: string): boolean {
    const episode = this.episodes.get(id);
    if (!episode) return false;
    this.remove(episode);
    return true;
  }

  closeAll(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    for (const episode of [...this.episodes.values()]) this.remove(episode);
  }

  /** Drop every episode idle longer than the TTL. Map order is creation order, not idleness, so scan all. */
  sweep(now = Date.now()): void {
    if (this.options.idleTtlMs <= 0 && !this.options.finishedTtlMs) return;
    for (const episode of this.episodes.values()) if (this.expired(episode, now)) this.evict(episode);
  }

  private expired(episode: Episode, now: number): boolean {
    const idle = now - episode.lastUsed;
    if (episode.done && this.options.finishedTtlMs && idle > this.options.finishedTtlMs) return true;
    return this.options.idleTtlMs > 0 && idle > this.options.idleTtlMs;
  }

  private evict(episode: Episode): void {
    this.remove(episode);
    this.options.onEvict?.(episode);
  }

  private remove(episode: Episode): void {
    this.episodes.delete(episode.id);
    this.finished.delete(episode.id);
    // close() of an in-flight episode waits for its pending step.
    void episode.tail.then(
      () => episode.env.close(),
      () => episode.env.close(),
    ).catch(() => undefined);
  }
}
