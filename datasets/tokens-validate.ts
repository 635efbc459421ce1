// `dataset validate --tokenizer tokenizer.json` on format tokens: how many rows re-tokenise to other ids
// when their conversation is rendered again (the model's chat template with --chat-template, else
// rollout/chatml.ts) up to the last assistant turn: the ids a trainer would get from the text are not
// the ids the model sampled. The rows themselves (schema, counts, the card's features) are checked as
// every config's are (validate.ts).
import { join } from "node:path";
import { assistantBody, IM_END, renderChatML, type EpisodeRow } from "../rollout/index.ts";
import type { ChatTemplate } from "./chat-template.ts";
import { readLines } from "./lines.ts";
import type { Manifest } from "./manifest.ts";
import type { TextTokenizer } from "./tokenizer.ts";
import { TOKENS_DIR, TokensRow } from "./tokens.ts";

export interface TokensReport {
  rows: number;
  /** With a tokenizer: rows whose rendered conversation re-tokenises to other ids, and the first few. */
  retokenized?: { differ: number; examples: string[] };
}

const firstDifference = (a: readonly number[], b: readonly number[]) => {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
};

/**
 * The ids of the conversation as rendered again, through the last assistant turn's end-of-turn token:
 * with the model's chat template (what follows that token, a template's newline, left out), else as
 * ChatML (the stand-in's rendering).
 */
export function renderedIds(row: TokensRow, tokenizer: TextTokenizer, template?: ChatTemplate): number[] {
  const messages = row.messages as unknown as EpisodeRow["messages"];
  const last = messages.map((m) => m.role).lastIndexOf("assistant");
  const text = template
    ? template.render(row.messages.slice(0, last + 1) as Record<string, unknown>[], row.tools).trimEnd()
    : renderChatML(messages.slice(0, last), row.tools ?? undefined) + assistantBody(messages[last]!) + IM_END;
  return tokenizer.encode(text);
}

/** The tokens config's row count (as the manifest lists it), and with a tokenizer how many rows re-tokenise to other ids. */
export async function validateTokens(dir: string, manifest: Manifest, tokenizer?: TextTokenizer, template?: ChatTemplate): Promise<TokensReport | undefined> {
  const files = manifest.files.filter((f) => f.path.startsWith(`${TOKENS_DIR}/`) && f.path.endsWith(".jsonl"));
  if (!files.length && !tokenizer) return undefined;
  const report: TokensReport = { rows: files.reduce((n, f) => n + f.rows, 0) };
  if (!tokenizer) return report;
  const retokenized = (report.retokenized = { differ: 0, examples: [] as string[] });
  for (const f of files) {
    for await (const line of readLines(join(dir, f.path))) {
      if (!line.text.trim()) continue;
      let parsed;
      try {
        parsed = TokensRow.safeParse(JSON.parse(line.text));
      } catch {
        continue; // reported by the row checks
      }
      if (!parsed.success) continue;
      const row = parsed.data;
      const sampled = row.prompt_ids.concat(row.completion_ids);
      const again = renderedIds(row, tokenizer, template);
      if (again.length === sampled.length && firstDifference(again, sampled) === again.length) continue;
      retokenized.differ++;
      if (retokenized.examples.length < 3) {
        const at = firstDifference(again, sampled);
        retokenized.examples.push(`${f.path}:${line.lineNo} (${row.suite}/${row.task_id}): from id ${at} of ${sampled.length}, ${JSON.stringify(sampled.slice(at, at + 4))} sampled vs ${JSON.stringify(again.slice(at, at + 4))} rendered again`);
      }
    }
  }
  return report;
}
