// Exponential backoff with full jitter: wait a uniform time in [0, min(cap, base * 2^attempt)],
// or what the server asked for in Retry-After when it said so.
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

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
