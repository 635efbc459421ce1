// A Map bounded by entry count: the least recently used entry goes first, or with order "insertion"
// the oldest entry (a get moves nothing: for caches keyed by long strings, moving an entry compares
// its key twice more, and for counts read once per request it is the Map's two extra writes).
export class Lru<K, V> {
  private readonly map = new Map<K, V>();

  constructor(
    readonly max: number,
    private readonly order: "use" | "insertion" = "use",
  ) {
    if (!Number.isInteger(max) || max < 1) throw new Error(`Lru max must be a positive integer (got ${max})`);
  }

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined && this.order === "use") {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as K);
  }

  delete(key: K): void {
    this.map.delete(key);
  }
}
