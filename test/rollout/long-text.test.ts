// Long texts in parts (rollout/long-text.ts): parseLongJson gives exactly JSON.parse of the joined text,
// for every shape and every place the parts are cut, and LongText's string methods agree with the
// string's. The stand-in reads FHIR replies of several MB with them.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LongText, parseLongJson } from "../../rollout/index.ts";

/** The text cut into parts at the given places (not inside a surrogate pair, as LongText's parts never are). */
function cutAt(text: string, places: number[]): LongText {
  const cuts = [...new Set(places.map((p) => p % (text.length + 1)))]
    .filter((p) => !(p > 0 && p < text.length && text.charCodeAt(p - 1) >= 0xd800 && text.charCodeAt(p - 1) <= 0xdbff))
    .sort((a, b) => a - b);
  const parts: string[] = [];
  let from = 0;
  for (const c of cuts) {
    parts.push(text.slice(from, c));
    from = c;
  }
  parts.push(text.slice(from));
  return new LongText(parts);
}

/** What `f` returns, and the longest string JSON.parse was given meanwhile. */
function watchingParse(f: () => unknown): { value: unknown; longest: number } {
  const parse = JSON.parse;
  let longest = 0;
  JSON.parse = (s: string, reviver?: Parameters<typeof parse>[1]) => {
    longest = Math.max(longest, s.length);
    return parse(s, reviver);
  };
  try {
    return { value: f(), longest };
  } finally {
    JSON.parse = parse;
  }
}

/** What a call returns or throws, to compare two ways of doing the same. */
function outcome(f: () => unknown): unknown {
  try {
    return { value: f() };
  } catch (e) {
    return { threw: (e as Error).name };
  }
}

const tricky = fc.constantFrom('"', "\\", "[", "]", "{", "}", ",", ":", "\u{1F600}", "é", "\n", "\u0000ehrgym-array:0", " ", "__proto__");
const text = fc.array(fc.oneof(fc.string(), tricky), { maxLength: 4 }).map((a) => a.join(""));
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small" }, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), text, tie("array"), tie("object")),
  array: fc.array(tie("value"), { maxLength: 5 }),
  object: fc.dictionary(text, tie("value"), { maxKeys: 5 }),
})).value;
/** A top-level object with arrays as values (the shape read element by element), among other values. */
const document = fc.dictionary(text, fc.oneof(fc.array(json, { maxLength: 8 }), json), { maxKeys: 6 });

describe("parseLongJson", () => {
  it("equals JSON.parse of the joined text, however it is printed and cut", () => {
    fc.assert(
      fc.property(document, fc.constantFrom(undefined, 1, 2, "\t"), fc.array(fc.nat(), { maxLength: 12 }), fc.string({ maxLength: 3 }), (doc, indent, places, pad) => {
        const whole = `${pad.replace(/\S/g, " ")}${JSON.stringify(doc, null, indent)}`;
        const long = cutAt(whole, places);
        expect(outcome(() => parseLongJson(long))).toEqual(outcome(() => JSON.parse(whole)));
      }),
      { numRuns: 2000 },
    );
  });

  it("equals JSON.parse on texts that are not JSON, or not an object, or only nearly the shape", () => {
    fc.assert(
      fc.property(document, fc.nat(), fc.array(fc.nat(), { maxLength: 6 }), fc.constantFrom("cut", "insert", "array", "scalar"), (doc, at, places, how) => {
        let whole = JSON.stringify(doc, null, 2);
        const i = at % (whole.length + 1);
        if (how === "cut") whole = whole.slice(0, i);
        else if (how === "insert") whole = `${whole.slice(0, i)}${"[]{},\"\\ x"[at % 10]}${whole.slice(i)}`;
        else if (how === "array") whole = JSON.stringify([doc, [1, 2]]);
        else whole = JSON.stringify(String(at));
        expect(outcome(() => parseLongJson(cutAt(whole, places)))).toEqual(outcome(() => JSON.parse(whole)));
      }),
      { numRuns: 2000 },
    );
  });

  it("keeps a __proto__ key an own property, as JSON.parse does", () => {
    const whole = '{"__proto__": [1, {"a": 2}], "b": [3], "__proto__": [4]}';
    const value = parseLongJson(cutAt(whole, [7, 20, 33])) as object;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(JSON.stringify(value)).toBe(JSON.stringify(JSON.parse(whole)));
    expect(Object.getOwnPropertyNames(value)).toEqual(["__proto__", "b"]);
  });

  it("reads a range of the text, and arrays of many elements in batches", () => {
    const entries = Array.from({ length: 3000 }, (_, i) => ({ fullUrl: `http://x/fhir/Observation/${i}`, resource: { id: String(i), note: "a, [b] {c} \"d\" é".repeat(i % 7) } }));
    const bundle = { resourceType: "Bundle", total: entries.length, link: [{ relation: "self", url: "u" }], entry: entries, empty: [], spaced: [ ] };
    const prefix = "Here is the response from the GET request:\n";
    const whole = `${prefix}${JSON.stringify(bundle, null, 2)}. Please call FINISH`;
    const parts: string[] = [];
    for (let i = 0; i < whole.length; i += 32_771) parts.push(whole.slice(i, i + 32_771));
    const end = whole.lastIndexOf(". Please");
    // No string of more than a batch is parsed: the ~0.5 MB text is never made whole.
    const { value, longest } = watchingParse(() => parseLongJson(new LongText(parts), prefix.length, end));
    expect(value).toEqual(bundle);
    expect(whole.length).toBeGreaterThan(500_000);
    expect(longest).toBeLessThan(64 << 10);
  });
});

describe("parseLongJson through long pretty-printed arrays", () => {
  it("equals JSON.parse however the arrays follow one another and the text is cut", () => {
    const element = (i: number) => ({ resource: { id: String(i), code: { coding: [{ system: "http://loinc.org", code: "A" }, { code: "B" }] }, note: "}, {\n ] [".repeat(i % 3) } });
    const list = (n: number) => Array.from({ length: n }, (_, i) => element(i));
    const hapi = (text: string) => text.replace(/\},\n\s*\{/g, "}, {").replace(/\[\n\s*\{/g, "[ {");
    fc.assert(
      fc.property(fc.nat(3000), fc.nat(3000), fc.nat(40), fc.boolean(), fc.array(fc.nat(), { maxLength: 10 }), (a, b, c, style, places) => {
        // Long arrays back to back, a short one between, and one more after a scalar.
        const doc = { resourceType: "Bundle", link: list(2), entry: list(a), other: list(b), total: a, tail: list(c) };
        const pretty = JSON.stringify(doc, null, 2);
        const whole = style ? hapi(pretty) : pretty;
        const { value, longest } = watchingParse(() => parseLongJson(cutAt(whole, places)));
        expect(value).toEqual(doc);
        expect(longest).toBeLessThan(64 << 10);
      }),
      { numRuns: 40 },
    );
  });
});

describe("parseLongJson with a memo of batches", () => {
  it("takes batches parsed before from the memo, and gives what JSON.parse gives", () => {
    const bundle = (id: string) => ({ resourceType: "Bundle", id, entry: Array.from({ length: 2000 }, (_, i) => ({ resource: { id: String(i), note: "x".repeat(40) } })) });
    const cut = (s: string) => new LongText(Array.from({ length: Math.ceil(s.length / 30_001) }, (_, i) => s.slice(i * 30_001, (i + 1) * 30_001)));
    const memo = new Map<string, unknown[]>();
    const first = parseLongJson(cut(JSON.stringify(bundle("a"), null, 2)), undefined, undefined, memo) as ReturnType<typeof bundle>;
    expect(first).toEqual(bundle("a"));
    expect(memo.size).toBeGreaterThan(1);
    // Another reply with the same entries behind a head of the same length: its entries come from the memo.
    const second = parseLongJson(cut(JSON.stringify(bundle("b"), null, 2)), undefined, undefined, memo) as ReturnType<typeof bundle>;
    expect(second).toEqual(bundle("b"));
    expect(second.entry[1999]).toBe(first.entry[1999]);
    // A memo entry is only ever the parse of its own text: other entries are parsed afresh.
    const other = { ...bundle("c"), entry: bundle("c").entry.map((e) => ({ resource: { ...e.resource, note: "y".repeat(40) } })) };
    expect(parseLongJson(cut(JSON.stringify(other, null, 2)), undefined, undefined, memo)).toEqual(other);
  });
});

describe("LongText", () => {
  it("slices, and finds its start, matches and last matches, as its joined string does", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 60 }), fc.array(fc.nat(), { maxLength: 8 }), fc.nat(), fc.nat(), fc.string({ maxLength: 3 }), (s, places, a, b, needle) => {
        const long = cutAt(s, places);
        const [start, end] = [a % (s.length + 1), b % (s.length + 1)].sort((x, y) => x - y) as [number, number];
        expect(long.text()).toBe(s);
        expect(long.length).toBe(s.length);
        expect(long.slice(start, end)).toBe(s.slice(start, end));
        expect(long.startsWith(s.slice(0, end))).toBe(true);
        expect(long.startsWith(needle)).toBe(s.startsWith(needle));
        expect(long.lastIndexOf(needle)).toBe(needle === "" ? s.length : s.lastIndexOf(needle));
        expect(long.indexOf(needle, start)).toBe(s.indexOf(needle, start));
        const inside = s.slice(start, Math.min(end, start + 4));
        if (inside) {
          expect(long.lastIndexOf(inside)).toBe(s.lastIndexOf(inside));
          expect(long.indexOf(inside, a % (s.length + 1))).toBe(s.indexOf(inside, a % (s.length + 1)));
        }
      }),
      { numRuns: 3000 },
    );
  });
});
