// Prompt templates with Python `str.format` semantics for the four text-protocol placeholders.
import { readFileSync } from "node:fs";
import { HARNESS_JSON_MAX_DEPTH, jsonDumps, jsonLoads, type Py } from "../python/index.ts";
import { UserError, utf8Text } from "../util/index.ts";

export const PLACEHOLDERS = ["api_base", "functions", "context", "question"] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];
export type TemplatePart = { text: string } | { field: Placeholder };

export class TemplateError extends UserError {}

/** Parses a template like Python's str.format: `{{`/`}}` are literal braces, `{name}` a field.
 *  Conversions, format specs, positional and unknown fields are rejected (str.format would fail). */
export function parseTemplate(text: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let lit = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "}") {
      if (text[i + 1] !== "}") throw new TemplateError(`Single '}' encountered in format string at char ${i}`);
      lit += "}";
      i++;
    } else if (c === "{") {
      if (text[i + 1] === "{") {
        lit += "{";
        i++;
        continue;
      }
      const end = text.indexOf("}", i);
      if (end < 0) throw new TemplateError(`Single '{' encountered in format string at char ${i}`);
      const name = text.slice(i + 1, end);
      if (!(PLACEHOLDERS as readonly string[]).includes(name)) {
        throw new TemplateError(`unknown placeholder {${name}} at char ${i}; allowed: ${PLACEHOLDERS.map((p) => `{${p}}`).join(" ")}`);
      }
      if (lit) parts.push({ text: lit });
      lit = "";
      parts.push({ field: name as Placeholder });
      i = end;
    } else lit += c;
  }
  if (lit) parts.push({ text: lit });
  return parts;
}

/** `template.format(**values)` (single pass: braces inside values are not interpreted). */
export function formatTemplate(parts: TemplatePart[], values: Record<Placeholder, string>): string {
  let out = "";
  for (const p of parts) out += "text" in p ? p.text : values[p.field];
  return out;
}

/** Bound on remembered prompts (a task suite has hundreds to a few thousand tasks). */
const MAX_RENDERED = 10_000;

/**
 * A text-protocol prompt bound to one api_base and function list: the fixed parts are rendered once,
 * and each task's first message once (see `render`).
 */
export class TextPrompt {
  private readonly parts: ({ text: string } | { field: "context" | "question" })[] = [];

  constructor(template: string, functions: Py, apiBase: string) {
    const fixed = { api_base: apiBase, functions: jsonDumps(functions) };
    let lit = "";
    for (const p of parseTemplate(template)) {
      if ("text" in p) lit += p.text;
      else if (p.field === "api_base" || p.field === "functions") lit += fixed[p.field];
      else {
        if (lit) this.parts.push({ text: lit });
        lit = "";
        this.parts.push({ field: p.field });
      }
    }
    if (lit) this.parts.push({ text: lit });
  }

  /** Rendered prompts by task text: every episode of a task shares one flat string (~7 KB), instead
   *  of a rope each that the first JSON or MessagePack encoding flattens into a copy of its own. */
  private readonly rendered = new Map<string, string>();

  render(context: string, question: string): string {
    const key = `${context}\u0000${question}`;
    let out = this.rendered.get(key);
    if (out === undefined) {
      out = this.parts.map((p) => ("text" in p ? p.text : p.field === "context" ? context : question)).join("");
      if (this.rendered.size >= MAX_RENDERED) this.rendered.clear();
      this.rendered.set(key, out);
    }
    return out;
  }
}

const ASSETS = new URL("./assets/", import.meta.url);
/** The project's own text-protocol prompt template and function list (same protocol, own wording). */
export const DEFAULT_PROMPT_TEMPLATE_FILE = new URL("text-prompt.txt", ASSETS);
export const DEFAULT_FUNCTIONS_FILE = new URL("text-functions.json", ASSETS);
/** The project's own system prompt for the tool protocol. */
export const DEFAULT_TOOLS_SYSTEM_PROMPT_FILE = new URL("tools-system-prompt.txt", ASSETS);

/** Reads a system prompt file for the tool protocol (`--system-prompt FILE`); trailing newlines dropped. */
export function loadSystemPrompt(path: string | URL = DEFAULT_TOOLS_SYSTEM_PROMPT_FILE): string {
  return readText("--system-prompt", path).replace(/\n+$/, "");
}

/** Reads and checks a prompt template file (`--prompt-template FILE`). */
function readText(flag: string, path: string | URL): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new TemplateError(`${flag} ${String(path)}: cannot read the file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return utf8Text(bytes, `${flag} ${String(path)}`, TemplateError);
}

export function loadPromptTemplate(path: string | URL = DEFAULT_PROMPT_TEMPLATE_FILE): string {
  const text = readText("--prompt-template", path);
  try {
    parseTemplate(text);
  } catch (e) {
    throw new TemplateError(`--prompt-template ${String(path)}: ${(e as Error).message}`);
  }
  return text;
}

/** Reads a function list file (`--functions FILE`) with Python json.loads semantics (keeps 5 vs 5.0). */
export function loadFunctions(path: string | URL = DEFAULT_FUNCTIONS_FILE): Py {
  const text = readText("--functions", path);
  let value: Py;
  try {
    value = jsonLoads(text, HARNESS_JSON_MAX_DEPTH);
  } catch (e) {
    throw new TemplateError(`--functions ${String(path)}: not valid JSON: ${(e as Error).message}`);
  }
  if (!Array.isArray(value)) throw new TemplateError(`--functions ${String(path)}: expected a JSON list of functions`);
  return value;
}
