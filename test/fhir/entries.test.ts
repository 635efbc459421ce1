// Joined pages: a page of stored rows asked for again is kept as one string per service; it must read
// exactly as its entries joined, before and after the cache overflows its budget, and never for
// overlay rows.
import { describe, expect, it } from "vitest";
import { createStoreBuilder } from "../../env/fhir/index.ts";
import type { BaseStore } from "../../env/fhir/store.ts";
import { EntryTexts } from "../../env/fhir/entries.ts";
import { API_BASE, lab, patient } from "../core/fixtures.ts";

function table() {
  const b = createStoreBuilder();
  b.addResource(patient("S1", "Doe", "Jane", "1970-01-01"));
  for (let i = 0; i < 30; i++) b.addResource(lab(String(100 + i), "S1", "K", 3 + i / 10, `2023-01-${String(1 + (i % 28)).padStart(2, "0")}T08:00:00+00:00`));
  return (b.build() as BaseStore).table("Observation")!;
}

describe("EntryTexts.joined", () => {
  it("equals the entries joined, across budget overflows", () => {
    const t = table();
    const texts = new EntryTexts(API_BASE, 20_000); // a few pages fit, then the cache starts over
    const rows = Array.from({ length: t.size }, (_, i) => i);
    for (let round = 0; round < 3; round++) {
      for (const [from, length] of [[0, 5], [5, 20], [10, 3], [0, 30], [0, 5]] as const) {
        const blocks = rows.slice(from, from + length).map((r) => texts.block(t, r));
        const want = blocks.join(", ");
        const first = texts.joined(t, rows, from, length);
        if (first !== undefined) expect(first).toBe(want); // known from an earlier round
        expect(texts.joined(t, rows, from, length)).toBe(want);
      }
    }
  });

  it("is undefined when a hit is not a stored row", () => {
    const t = table();
    const texts = new EntryTexts(API_BASE);
    expect(texts.joined(t, [0, { id: "x", text: "{}" } as never, 2], 0, 3)).toBeUndefined();
    expect(texts.joined(t, [0, 1, 2], 0, 3)).toBeUndefined(); // seen once: not worth a copy yet
    expect(texts.joined(t, [0, 1, 2], 0, 3)).toBe([0, 1, 2].map((r) => texts.block(t, r)).join(", "));
    expect(texts.joined(t, [0, 1, 3], 0, 3)).toBeUndefined();
  });
});
