// Exponential backoff with full jitter: wait a uniform time in [0, min(cap, base * 2^attempt)],
// or what the server asked for in Retry-After when it said so.
import { setTimeout as delay } from "node:timers/promises";

export interface BackoffOptions {
  baseMs?: number;
  capMs?: number;
  random?: () => number;
}

export function backoffMs(attempt: number, retryAfter: number | undefined, o: BackoffOptions = {}): number {
  const cap = o.capMs ?? 60_000;
  if (retryAfter !== undefined) return Math.min(cap, retryAfter);
  const ceiling = Math.min(cap, (o.baseMs ?? 500) * 2 ** attempt);
  return (o.random ?? Math.random)() * ceiling;
}

/** Resolves after `ms`; rejects when `signal` aborts first. */
export const sleep = (ms: number, signal?: AbortSignal): Promise<void> => delay(ms, undefined, signal ? { signal } : {});
