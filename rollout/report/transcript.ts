// One episode's transcript as a chat: system/user prompt, assistant turns (with tool calls),
// environment replies. Long texts (the prompt's function list, FHIR bundles) keep their head and
// tail (where the question and the answer are) so the page stays small.
import type { EpisodeRow } from "../row.ts";
import { esc } from "./html-escape.ts";
import { shownTaskId } from "./html-tables.ts";

/** Characters kept at each end of a long message. */
export const KEEP_CHARS = 1000;

function body(text: string): string {
  if (text.length <= 2 * KEEP_CHARS + 200) return `<pre>${esc(text)}</pre>`;
  const cut = text.length - 2 * KEEP_CHARS;
  return `<pre>${esc(text.slice(0, KEEP_CHARS))}</pre><p class="cut">… ${cut.toLocaleString("en-US")} characters not shown …</p><pre>${esc(text.slice(-KEEP_CHARS))}</pre>`;
}

function prettyArguments(args: string): string {
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args; // the model's own malformed arguments, shown as sent
  }
}

const verdictText = (row: EpisodeRow) => (row.reward === 1 ? `<span class="ok">reward 1</span>` : `<span class="bad">reward ${esc(row.reward)}</span>`) + ` · ${esc(row.status)}`;

export function renderTranscript(row: EpisodeRow, id: string, runName: string): string {
  const failed = row.checks.filter((c) => !c.ok);
  const head =
    `<h3><span class="tid">${esc(row.task_id)}</span> · ${esc(runName)} · ${esc(row.suite)}/${esc(row.type)}${row.sample ? ` · sample ${row.sample}` : ""}</h3>` +
    `<p class="meta">${verdictText(row)} · ${row.rounds} rounds · ${esc(row.protocol)}${row.error ? ` · error: ${esc(row.error)}` : ""}</p>` +
    (failed.length ? `<ul class="checks">${failed.map((c) => `<li>✗ ${esc(c.name)}: ${esc(c.detail)}</li>`).join("")}</ul>` : "");
  const messages = row.messages.map((m) => {
    const calls = (m.tool_calls ?? []).map((c) => `<div class="call"><b>${esc(c.function.name)}</b>${body(prettyArguments(c.function.arguments))}</div>`).join("");
    const label = m.role === "tool" ? `tool${m.name ? ` ${esc(m.name)}` : ""}` : m.role;
    return `<div class="msg ${m.role}"><div class="role">${label}</div>${m.content ? body(m.content) : ""}${calls}</div>`;
  });
  // Collapsed; a link to its id (inside) opens it.
  const summary = `<summary><span class="tid">${esc(shownTaskId(row))}</span> · ${esc(runName)} · ${verdictText(row)}</summary>`;
  return `<details class="transcript">${summary}<div id="${id}">${head}<div class="chat">${messages.join("")}</div></div></details>`;
}
