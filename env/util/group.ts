// Grouping, as Map.groupBy does (Node 21 and later; ehrgym still runs on Node 20).

/** The items by key, keys in first-seen order, each group in input order. */
export function groupBy<T, K>(items: Iterable<T>, key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = groups.get(k);
    if (list) list.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}
