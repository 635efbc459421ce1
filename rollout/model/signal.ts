// A signal for one request that aborts with the run's. The openai client adds an abort listener to
// the signal it is given and never removes it: given the run's own signal, every request of a run
// would leave one behind (and each add walks the list, so the cost grows with the run).

/** Runs `fn` with a child of `parent` (aborted with its reason); the link is undone when `fn` settles. */
export async function withChildSignal<T>(parent: AbortSignal | undefined, fn: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
  if (!parent) return fn(undefined);
  const child = new AbortController();
  if (parent.aborted) child.abort(parent.reason);
  const onAbort = () => child.abort(parent.reason);
  parent.addEventListener("abort", onAbort, { once: true });
  try {
    return await fn(child.signal);
  } finally {
    parent.removeEventListener("abort", onAbort);
  }
}
