import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cleanTurn, parseTextTurn } from "../../env/protocol/index.ts";
import { floatRepr as pyFloatRepr, HARNESS_JSON_MAX_DEPTH, jsonDumps as pyJsonDumps, jsonLoads, pyStrip, strRepr as pyRepr } from "../../env/python/index.ts";

const pyJsonLoads = (s: string) => jsonLoads(s, HARNESS_JSON_MAX_DEPTH);
import { python } from "./python.ts";

// Python is the reference: each test sends a corpus to one python3 process and compares.

const PY_JSON = `
import json, sys
out = []
for s in json.load(sys.stdin):
    try:
        out.append({"ok": True, "dumps": json.dumps(json.loads(s))})
    except Exception as e:
        out.append({"ok": False})
print(json.dumps(out))
`;

const JSON_CORPUS = [
  '{"a": 1}', "[1, 2.0, -0, -0.0, 1e5, 1E+5, 1e-7, 0.0001, 0.00001, 123456789012345678901234567890]",
  "NaN", "Infinity", "-Infinity", "[NaN, -Infinity]", "nan", "inf", "1e400", "-1e400", "1.5e300", "12345678901234567.0",
  '{"a": 1, "b": 2, "a": 3}', '{"__proto__": {"x": 1}}', '"\\ud83d\\ude00 \\ud800 caf\\u00e9 \u00e9 \u007f"', '"tab\there"',
  '"ctrl\u0001"', '"\\x41"', '"\\u12"', '"\\uZZZZ"', "01", "1.", ".5", "-", "+1", "1 2", "", "   ", " \t\n[1]\r\n ", "\ufeff[1]",
  "[1,]", '{"a":1,}', "{'a': 1}", "true", "True", "null", "None", '"unterminated', "[" , "]", "{}", "[]", "[[[]]]",
  '{"resourceType": "Observation", "valueQuantity": {"value": 5.0, "unit": "mg"}}', "1".repeat(4300), "1".repeat(4301),
  "-" + "9".repeat(4300), "1" + "0".repeat(400) + ".5", "[".repeat(900) + "]".repeat(900), "[".repeat(1100) + "]".repeat(1100),
  '{"a": [1, {"b": null}], "c": "\u65e5\u672c"}', "0e0", "-0e-0", "5e-324", "1.7976931348623157e308", "2.5e-7", "1e16", "1e22",
];

describe("Python json.loads / json.dumps", () => {
  it("accepts and rejects what Python does, and dumps byte for byte like Python", () => {
    const random = fc.sample(fc.json(), { seed: 7, numRuns: 300 });
    const corpus = [...JSON_CORPUS, ...random];
    const expected = python<{ ok: boolean; dumps?: string }[]>(PY_JSON, corpus);
    const got = corpus.map((s) => {
      try {
        return { ok: true, dumps: pyJsonDumps(pyJsonLoads(s)) };
      } catch {
        return { ok: false };
      }
    });
    for (let i = 0; i < corpus.length; i++) expect([corpus[i]!.slice(0, 60), got[i]]).toEqual([corpus[i]!.slice(0, 60), expected[i]]);
  });

  it("renders floats like Python repr", () => {
    const values = [...fc.sample(fc.double({ noNaN: true }), { seed: 3, numRuns: 500 }), 0.1, 1 / 3, 1e16, 1e15, 123.456, -2.5e-5, 1e-4, 5e-324];
    // Sent as decimal strings: JSON would turn integral doubles into Python ints.
    const texts = values.map((v) => (Object.is(v, -0) ? "-0.0" : String(v)));
    const expected = python<string[]>("import json,sys; print(json.dumps([repr(float(x)) for x in json.load(sys.stdin)]))", texts);
    expect(values.map((v) => pyFloatRepr(v))).toEqual(expected);
  });
});

const PY_TURN = `
import json, sys
out = []
for c in json.load(sys.stdin):
    r = c.strip().replace('\`\`\`tool_code', '').replace('\`\`\`', '').strip()
    if r.startswith('GET'):
        out.append(["GET", r[3:].strip() + '&_format=json'])
    elif r.startswith('POST'):
        try:
            json.loads('\\n'.join(r.split('\\n')[1:]))
            out.append(["POST", r.split('\\n')[0][4:].strip(), True])
        except Exception:
            out.append(["POST", r.split('\\n')[0][4:].strip(), False])
    elif r.startswith('FINISH('):
        out.append(["FINISH", r[len('FINISH('):-1]])
    else:
        out.append(["INVALID"])
print(json.dumps(out))
`;

const TURNS = [
  "GET http://localhost:8080/fhir/Patient?identifier=S1", "  GET   http://x/fhir/Patient  \n", "```tool_code\nGET http://x/fhir/A?b=c\n```",
  "```\nFINISH([1])\n```", "FINISH([\"S6534835\"])", "FINISH(", "FINISH()", "FINISH([1]) ", "FINISH([1])\n", "FINISH([1]😀", "finish([1])",
  "POST http://x/fhir/Observation\n{\"a\": 1}", "POST http://x/fhir/Observation\n{\"a\": NaN}", "POST http://x/fhir/Observation\n{'a': 1}",
  "POST http://x/fhir/Observation", "POST\n[]", "POSTGET", "GETPOST", "", "   ", "\u0000\u0001GET x", "\u001cGET x\u001f", "\u0085FINISH([])\u0085",
  "\ufeffGET x", "\u00a0GET x\u3000", "GET x\nGET y", "GET x\nFINISH([1])", "I will now GET the data", "```GET x``` extra", "``` ``` ```",
  "GET ```tool_code x```", "POST x\n```json\n{\"a\": 1}\n```", "POST x\r\n{\"a\": 1}", "\u2028GET x\u2029", "GET\u000bx",
];

describe("text turns like the official harness", () => {
  it("classifies every turn, URL, POST validity and FINISH result exactly like Python", () => {
    const random = fc.sample(
      fc.tuple(fc.constantFrom("", " ", "```", "```tool_code", "\n", "GET", "POST", "FINISH(", "\u0085", "\ufeff"), fc.string({ unit: "binary" }), fc.constantFrom("", ")", "```", " \n", "\n{}", "😀")),
      { seed: 11, numRuns: 400 },
    ).map((parts) => parts.join(""));
    const corpus = [...TURNS, ...random];
    const expected = python<unknown[][]>(PY_TURN, corpus);
    const got = corpus.map((c) => {
      const t = parseTextTurn(c);
      if (t.kind === "GET") return ["GET", t.url];
      if (t.kind === "POST") return ["POST", t.url, t.payload !== undefined];
      if (t.kind === "FINISH") return ["FINISH", t.result];
      return ["INVALID"];
    });
    for (let i = 0; i < corpus.length; i++) expect([JSON.stringify(corpus[i]), got[i]]).toEqual([JSON.stringify(corpus[i]), expected[i]]);
  });

  it("strips with Python's whitespace set and removes fences", () => {
    const all = Array.from({ length: 0x3001 }, (_, i) => String.fromCharCode(i)).join("");
    const expected = python<string>("import json,sys; s=json.load(sys.stdin); print(json.dumps(''.join(c for c in s if c.isspace())))", all);
    const spaces = [...all].filter((c) => pyStrip(`a${c}`) === "a" && pyStrip(`${c}a`) === "a").join("");
    expect(spaces).toBe(expected);
    expect(cleanTurn(" ```tool_code\n GET x ```\n")).toBe("GET x");
  });

  it("quotes like Python repr", () => {
    const strs = ["a", "it's", 'say "hi"', `both ' and "`, "tab\tnl\n\\", "\u0000\u007f\u0085\u00a0é\u200b😀\ud800"];
    expect(strs.map(pyRepr)).toEqual(python<string[]>("import json,sys; print(json.dumps([repr(s) for s in json.load(sys.stdin)]))", strs));
  });
});
