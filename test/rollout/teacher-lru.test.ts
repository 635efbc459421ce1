// The stand-in's bounded caches (rollout/teacher/lru.ts): which entry goes first when one too many is set.
import { describe, expect, it } from "vitest";
import { Lru } from "../../rollout/teacher/lru.ts";

describe("Lru", () => {
  const filled = (order?: "use" | "insertion") => {
    const lru = new Lru<string, number>(2, order);
    lru.set("a", 1);
    lru.set("b", 2);
    expect(lru.get("a")).toBe(1);
    lru.set("c", 3);
    return lru;
  };

  it("drops the least recently used entry by default", () => {
    const lru = filled();
    expect([lru.get("a"), lru.get("b"), lru.get("c"), lru.size]).toEqual([1, undefined, 3, 2]);
  });

  it("drops the oldest entry with order 'insertion', whatever was read", () => {
    const lru = filled("insertion");
    expect([lru.get("a"), lru.get("b"), lru.get("c"), lru.size]).toEqual([undefined, 2, 3, 2]);
    // Setting a key again makes it the newest.
    lru.set("b", 4);
    lru.set("d", 5);
    expect([lru.get("b"), lru.get("c"), lru.get("d")]).toEqual([4, undefined, 5]);
  });

  it("refuses a size that is not a positive integer", () => {
    expect(() => new Lru(0)).toThrow(/positive integer/);
  });
});
