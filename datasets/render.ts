// A dataset row as a readable chat (the card's example, `dataset inspect --row N`).
import type { TrlRow } from "./schema.ts";

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}\n… (${(text.length - max).toLocaleString("en-US")} more characters)` : text);

export function renderChat(row: TrlRow, maxChars = 800): string {
  const head = `id ${row.id} · ${row.suite} · task ${row.task_id} (${row.type}${row.branch ? `, ${row.branch}` : ""}) · patient ${row.patient || "(none)"} · ${row.protocol} protocol · reward ${row.reward} · ${row.status} in ${row.rounds} rounds · model ${row.model}`;
  const turns = row.messages.map((m) => {
    const calls = (m.tool_calls ?? []).map((c) => `→ ${c.function.name}(${typeof c.function.arguments === "string" ? c.function.arguments : JSON.stringify(c.function.arguments)}) [${c.id}]`).join("\n");
    const label = m.role === "tool" ? `tool [${m.tool_call_id}]` : m.role;
    return `[${label}]\n${[m.content === null ? "" : clip(m.content, maxChars), calls].filter(Boolean).join("\n")}`;
  });
  return [head, ...turns].join("\n\n");
}
