// Chat templates rendered by ehrgym (datasets/chat-template.ts) as a batch for the differential test
// against transformers' Jinja (scripts/python/tests/test_chat_template.py): reads one JSON object per
// line on stdin, {"template": path, "messages": [...], "tools": [...] | null}, writes one JSON answer per
// line: {"ok": true, "text": rendered} or {"ok": false, "error": message}. Without "template": the
// stand-in's ChatML (rollout/chatml.ts renderChat, no generation prompt).
import { createInterface } from "node:readline";
import { loadChatTemplate, type ChatTemplate } from "../../datasets/chat-template.ts";
import { renderChatML } from "../../rollout/index.ts";

const templates = new Map<string, ChatTemplate>();
const out: string[] = [];
for await (const line of createInterface({ input: process.stdin })) {
  if (!line) continue;
  const { template, messages, tools } = JSON.parse(line) as { template?: string; messages: Record<string, unknown>[]; tools: unknown[] | null };
  try {
    if (template === undefined) {
      out.push(JSON.stringify({ ok: true, text: renderChatML(messages as unknown as Parameters<typeof renderChatML>[0], tools ?? undefined, false) }));
      continue;
    }
    let t = templates.get(template);
    if (!t) templates.set(template, (t = loadChatTemplate(template)));
    out.push(JSON.stringify({ ok: true, text: t.render(messages, tools) }));
  } catch (e) {
    out.push(JSON.stringify({ ok: false, error: (e as Error).message }));
  }
}
process.stdout.write(out.join("\n") + "\n");
