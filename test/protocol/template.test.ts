import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_FUNCTIONS_FILE,
  DEFAULT_PROMPT_TEMPLATE_FILE,
  formatTemplate,
  loadFunctions,
  loadPromptTemplate,
  parseTemplate,
  TemplateError,
  TextPrompt,
} from "../../env/protocol/index.ts";
import { describeShared, sharedFile } from "../helpers/shared.ts";
import { python } from "./python.ts";

// The reference: Python's own str.format + json.dumps over the two files.
const PY_RENDER = `
import json, sys
cases = json.load(sys.stdin)
out = []
for c in cases:
    template = open(c["template"], encoding="utf-8").read()
    funcs = json.load(open(c["functions"], encoding="utf-8"))
    out.append(template.format(api_base=c["api_base"], functions=json.dumps(funcs), context=c["context"], question=c["question"]))
print(json.dumps(out))
`;

const CASES = [
  { api_base: "http://localhost:8080/fhir/", context: "It's 2023-11-13T10:15:00+00:00 now", question: "What's the MRN of the patient with name Peter Stafford and DOB of 1953-11-13?" },
  { api_base: "http://127.0.0.1:39999/fhir/", context: "", question: "Braces {api_base} {0} {{x}} stay as written; unicode: Müller – 日本 😀" },
];

function render(template: string, functions: string) {
  const prompt = new TextPrompt(loadPromptTemplate(template), loadFunctions(functions), CASES[0]!.api_base);
  return CASES.map((c) => new TextPrompt(loadPromptTemplate(template), loadFunctions(functions), c.api_base).render(c.context, c.question)).concat(prompt.render("", ""));
}

describeShared("official prompt template", () => {
  it("renders the official template with the official functions exactly like Python", () => {
    const template = sharedFile("prompt_v1_text_protocol.txt");
    const functions = sharedFile("funcs_v1.json");
    const expected = python<string[]>(PY_RENDER, [...CASES, { ...CASES[0], context: "", question: "" }].map((c) => ({ ...c, template, functions })));
    expect(render(template, functions)).toEqual(expected);
  });
});

describe("own prompt template", () => {
  it("is a valid str.format template over the four placeholders and renders like Python", () => {
    const template = DEFAULT_PROMPT_TEMPLATE_FILE.pathname;
    const functions = DEFAULT_FUNCTIONS_FILE.pathname;
    const expected = python<string[]>(PY_RENDER, [...CASES, { ...CASES[0], context: "", question: "" }].map((c) => ({ ...c, template, functions })));
    const got = render(template, functions);
    expect(got).toEqual(expected);
    expect(got[0]).toContain("GET url?param_name1=param_value1");
    expect(got[0]).toContain("FINISH([answer1, answer2, ...])");
  });

  it("is not the official wording", () => {
    const own = readFileSync(DEFAULT_PROMPT_TEMPLATE_FILE, "utf8");
    expect(own).not.toContain("You are an expert in using FHIR functions");
  });
});

describe("str.format semantics", () => {
  it("treats doubled braces as literals and does not re-format values", () => {
    const parts = parseTemplate("{{a}} {question} }}{{");
    expect(formatTemplate(parts, { api_base: "", functions: "", context: "", question: "{context}" })).toBe("{a} {context} }{");
  });

  it.each([
    ["{unknown}", /unknown placeholder \{unknown\}/],
    ["a } b", /Single '\}'/],
    ["a { b", /Single '\{'/],
    ["{0}", /unknown placeholder/],
    ["{question!r}", /unknown placeholder/],
  ])("rejects %j", (template, message) => {
    expect(() => parseTemplate(template)).toThrow(TemplateError);
    expect(() => parseTemplate(template)).toThrow(message);
  });
});

describe("template and function files", () => {
  it("name the flag and the file when they cannot be used", async () => {
    const { mkdtempSync, writeFileSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const dir = mkdtempSync(join(tmpdir(), "ehrgym-tpl-"));
    expect(() => loadPromptTemplate(join(dir, "missing.txt"))).toThrow(/--prompt-template .*missing\.txt: cannot read the file \(ENOENT\)/);
    writeFileSync(join(dir, "bad.txt"), "Use {apibase}");
    expect(() => loadPromptTemplate(join(dir, "bad.txt"))).toThrow(/--prompt-template .*bad\.txt: unknown placeholder \{apibase\}/);
    writeFileSync(join(dir, "f.json"), "{'a': 1}");
    expect(() => loadFunctions(join(dir, "f.json"))).toThrow(/--functions .*f\.json: not valid JSON/);
    writeFileSync(join(dir, "g.json"), '{"a": 1}');
    expect(() => loadFunctions(join(dir, "g.json"))).toThrow(/expected a JSON list/);
  });
});
