// The tool definitions ehrgym offers have the structure of the original V2 code's: the same tool names,
// and for each the same argument names, nesting, required fields and JSON types, compared with
// `../shared/medagentbench/tools_v2_reference.json` (the original's tools exported as JSON: a list of
// each tool's schema in Chat Completions or Responses form), strictness and closed objects included.
// Descriptions are ehrgym's own, so they are not compared. Pydantic writes nested models as `$defs` + `$ref` and `Optional[X]` as `anyOf`;
// ehrgym writes nested objects in place and `type: [X, "null"]`: both are normalised to one shape.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadToolSchemas, openAITools, TOOL_ALIASES } from "../../env/protocol/tools.ts";

const REFERENCE = new URL("../../../shared/medagentbench/tools_v2_reference.json", import.meta.url);

type Json = Record<string, unknown>;

/** A JSON Schema's structure: allowed types, properties, required names, whether unknown keys are
 *  refused (`additionalProperties: false`), array items. */
interface Shape {
  types: string[];
  properties?: Record<string, Shape>;
  required?: string[];
  closed?: boolean;
  items?: Shape;
}

function shapeOf(schema: Json, root: Json): Shape {
  const ref = schema.$ref;
  if (typeof ref === "string") {
    const target = ref
      .replace(/^#\//, "")
      .split("/")
      .reduce<unknown>((node, key) => (node as Json | undefined)?.[key], root);
    return shapeOf(target as Json, root);
  }
  const alternatives = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (alternatives) {
    const shapes = alternatives.map((a) => shapeOf(a, root));
    const merged: Shape = { types: [...new Set(shapes.flatMap((s) => s.types))].sort() };
    for (const s of shapes) Object.assign(merged, { ...s, types: merged.types });
    return merged;
  }
  const types = schema.type === undefined ? (schema.properties ? ["object"] : []) : [schema.type].flat().map(String).sort();
  const shape: Shape = { types: types.map((t) => (t === "integer" ? "number" : t)) };
  if (schema.properties) shape.properties = Object.fromEntries(Object.entries(schema.properties as Record<string, Json>).map(([k, v]) => [k, shapeOf(v, root)]));
  if (Array.isArray(schema.required) && schema.required.length) shape.required = [...(schema.required as string[])].sort();
  if (schema.additionalProperties === false) shape.closed = true;
  if (schema.items && typeof schema.items === "object") shape.items = shapeOf(schema.items as Json, root);
  return shape;
}

function shapes(tools: { function: { name: string; parameters?: unknown; strict?: boolean } }[]): Record<string, Shape & { strict?: boolean }> {
  return Object.fromEntries(
    tools.map((t) => {
      const params = (t.function.parameters ?? { type: "object", properties: {} }) as Json;
      return [TOOL_ALIASES[t.function.name] ?? t.function.name, { ...shapeOf(params, params), strict: t.function.strict }];
    }),
  );
}

describe.skipIf(!existsSync(REFERENCE))("tool definitions against the original's exported schemas", () => {
  it("offers the same tools with the same argument structure", () => {
    const reference = shapes(loadToolSchemas(REFERENCE.pathname));
    const ours = shapes(openAITools());
    expect(Object.keys(ours).sort()).toEqual(Object.keys(reference).sort());
    for (const name of Object.keys(reference)) expect({ name, shape: ours[name] }).toEqual({ name, shape: reference[name] });
  });

  it("is strict as the reference is: every tool strict, every object closed with all its properties required", () => {
    const closedEverywhere = (s: Shape): boolean =>
      (!s.properties || (s.closed === true && JSON.stringify(s.required) === JSON.stringify(Object.keys(s.properties).sort()) && Object.values(s.properties).every(closedEverywhere))) && (!s.items || closedEverywhere(s.items));
    for (const [name, shape] of Object.entries(shapes(loadToolSchemas(REFERENCE.pathname)))) expect({ name, strict: shape.strict, closed: closedEverywhere(shape) }).toEqual({ name, strict: true, closed: true });
  });

  it("--tool-schemas reproduces the file: each tool's function object byte for byte, strict included", () => {
    const file = JSON.parse(readFileSync(REFERENCE, "utf8")) as Json[];
    const loaded = loadToolSchemas(REFERENCE.pathname);
    expect(loaded.map((t) => JSON.stringify(t.function))).toEqual(file.map((t) => JSON.stringify("function" in t ? t.function : Object.fromEntries(Object.entries(t).filter(([k]) => k !== "type")))));
  });
});

// The normaliser itself, so the comparison above cannot pass by flattening everything away.
describe("the structure normaliser", () => {
  it("reads pydantic's $defs/$ref and anyOf-null as ehrgym's in-place objects and type lists", () => {
    const pydantic: Json = {
      type: "object",
      $defs: { P: { type: "object", properties: { patient: { type: "string" }, date: { anyOf: [{ type: "string" }, { type: "null" }] } }, required: ["patient"] } },
      properties: { search_params: { $ref: "#/$defs/P" }, explanation: { type: "string" } },
      required: ["search_params", "explanation"],
    };
    const inPlace: Json = {
      type: "object",
      properties: { explanation: { type: "string" }, search_params: { type: "object", properties: { date: { type: ["string", "null"] }, patient: { type: "string" } }, required: ["patient"] } },
      required: ["explanation", "search_params"],
    };
    expect(shapeOf(pydantic, pydantic)).toEqual(shapeOf(inPlace, inPlace));
    const missingRequired: Json = { ...inPlace, properties: { ...(inPlace.properties as Json), search_params: { type: "object", properties: { patient: { type: "string" } } } } };
    expect(shapeOf(missingRequired, missingRequired)).not.toEqual(shapeOf(pydantic, pydantic));
  });

  it("tells ehrgym's own tools apart (each has its own shape)", () => {
    const ours = shapes(openAITools());
    expect(Object.keys(ours)).toHaveLength(11);
    expect(ours.patient_search!.required).toEqual(["birthdate", "family", "given", "identifier"]);
    expect(ours.fhir_observation_search!.properties!.search_params!.types).toEqual(["object"]);
  });

  it("reads an export in Responses form (flat name + parameters) to the same structure", () => {
    const dir = mkdtempSync(join(tmpdir(), "ehrgym-tools-"));
    try {
      const file = join(dir, "tools.json");
      writeFileSync(file, JSON.stringify(openAITools().map((t) => ({ type: "function", name: t.function.name, parameters: t.function.parameters, strict: t.function.strict }))));
      expect(shapes(loadToolSchemas(file))).toEqual(shapes(openAITools()));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
