import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compactJson, prettyJson } from "../../env/fhir/index.ts";
import { parseLossless } from "../../env/fhir/lossless.ts";
import { stringifyCompact } from "../../env/fhir/index.ts";

describe("HAPI pretty printer", () => {
  it("formats objects, arrays of objects and of primitives the HAPI way", () => {
    expect(prettyJson('{"a":[{"b":1},{"c":[ "x","y" ]}],"d":{},"e":[],"f":"q\\"}"}')).toBe(
      '{\n  "a": [ {\n    "b": 1\n  }, {\n    "c": [ "x", "y" ]\n  } ],\n  "d": { },\n  "e": [ ],\n  "f": "q\\"}"\n}',
    );
    expect(prettyJson('{"a":{"b":5.0}}', 4)).toBe('{\n      "a": {\n        "b": 5.0\n      }\n    }');
  });
  it("pretty and compact are inverse and keep lexemes (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify(v);
        expect(compactJson(prettyJson(text))).toBe(text);
        expect(JSON.parse(prettyJson(text))).toEqual(JSON.parse(text));
      }),
      { seed: 7, numRuns: 300 },
    );
    const lexemes = '{"a":5.0,"b":[1.10,-0.0,1e5,12345678901234567890]}';
    expect(compactJson(prettyJson(lexemes, 6))).toBe(lexemes);
    expect(stringifyCompact(parseLossless(lexemes))).toBe(lexemes);
  });
});
