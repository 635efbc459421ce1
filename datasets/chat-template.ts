// A model's own chat template for `dataset validate --chat-template`: a Jinja file, or the
// tokenizer_config.json that holds it (its `chat_template`, and the bos/eos token strings templates
// read), rendered with @huggingface/jinja (Hugging Face's JavaScript Jinja for chat templates) as an
// inference server renders a request (asServerRenders).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { Template } from "@huggingface/jinja";
import { z } from "zod";
import { DatasetError } from "./manifest.ts";

const TokenText = z.union([z.string(), z.object({ content: z.string() }).loose()]).nullable().optional();
const TokenizerConfig = z
  .object({
    chat_template: z.union([z.string(), z.array(z.object({ name: z.string(), template: z.string() })).min(1)], "a chat_template string or a list of {name, template}"),
    bos_token: TokenText,
    eos_token: TokenText,
  })
  .loose();

export interface ChatTemplate {
  /** The file's sha256 (what a card names it by). */
  readonly sha256: string;
  /** The conversation through its last message as the template renders it, without a generation prompt. */
  render(messages: readonly Record<string, unknown>[], tools: readonly unknown[] | null | undefined): string;
}

const tokenText = (t: z.infer<typeof TokenText>) => (t == null ? "" : typeof t === "string" ? t : t.content);

function compile(path: string, text: string): Template {
  try {
    return new Template(text);
  } catch (err) {
    throw new DatasetError(`--chat-template ${path}: the template does not parse (${(err as Error).message})`);
  }
}

const REASONING_FIELDS = ["reasoning_content", "thinking", "reasoning"] as const;

/**
 * The message as a server hands it to a Hugging Face template (transformers' apply_chat_template, which
 * vLLM calls): keys without a value left out, the reasoning under the names templates read
 * (`reasoning_content`; `thinking` for gpt-oss), tool-call arguments sent as JSON text as objects.
 */
function asServerRenders(message: Record<string, unknown>): Record<string, unknown> {
  let m = Object.fromEntries(Object.entries(message).filter(([, v]) => v !== null && v !== undefined));
  const reasoning = REASONING_FIELDS.map((k) => m[k]).find((v) => v !== undefined);
  if (reasoning !== undefined) m = { thinking: reasoning, ...m, reasoning_content: reasoning };
  const calls = m.tool_calls;
  if (!Array.isArray(calls) || !calls.length) return m;
  return {
    ...m,
    tool_calls: calls.map((c: { function?: { arguments?: unknown } }) => {
      const args = c.function?.arguments;
      if (typeof args !== "string") return c;
      try {
        const parsed: unknown = JSON.parse(args);
        return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? { ...c, function: { ...c.function, arguments: parsed } } : c;
      } catch {
        return c;
      }
    }),
  };
}

/** A `.json` file is read as a tokenizer_config.json; anything else as the template's text. */
export function loadChatTemplate(path: string): ChatTemplate {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new DatasetError(`--chat-template ${path}: not readable (${(err as Error).message})`);
  }
  let templates: { default: Template; toolUse?: Template };
  let specials = { bos_token: "", eos_token: "" };
  if (path.endsWith(".json")) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new DatasetError(`--chat-template ${path}: not JSON (${(err as Error).message})`);
    }
    const parsed = TokenizerConfig.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new DatasetError(`--chat-template ${path}: ${issue.path.join(".") || "(file)"}: ${issue.message}`);
    }
    const c = parsed.data;
    specials = { bos_token: tokenText(c.bos_token), eos_token: tokenText(c.eos_token) };
    if (typeof c.chat_template === "string") templates = { default: compile(path, c.chat_template) };
    else {
      // Named templates, as transformers picks them: "tool_use" when tools are given, else "default".
      const named = new Map(c.chat_template.map((t) => [t.name, t.template]));
      const fallback = named.get("default");
      if (fallback === undefined) throw new DatasetError(`--chat-template ${path}: chat_template lists no "default" template`);
      const toolUse = named.get("tool_use");
      templates = { default: compile(path, fallback), ...(toolUse !== undefined ? { toolUse: compile(path, toolUse) } : {}) };
    }
  } else templates = { default: compile(path, text) };
  return {
    sha256: createHash("sha256").update(text).digest("hex"),
    render(messages, tools) {
      const template = (tools?.length && templates.toolUse) || templates.default;
      try {
        return template.render({ messages: messages.map(asServerRenders), ...(tools?.length ? { tools } : {}), add_generation_prompt: false, ...specials });
      } catch (err) {
        throw new DatasetError(`--chat-template ${path}: rendering a conversation failed (${(err as Error).message})`);
      }
    },
  };
}
