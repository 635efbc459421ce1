// `dataset validate` on format tokens: each line is a TokensRow, the files hold the manifest's rows,
// the card's `tokens` config declares the row's features; with `--tokenizer tokenizer.json`, how many
// rows re-tokenise to other ids when their conversation is rendered again (rollout/chatml.ts) up to the
// last assistant turn: the ids a trainer would get from the text are not the ids the model sampled.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { assistantBody, IM_END, renderChatML, type EpisodeRow } from "../rollout/index.ts";
import { readLines } from "./lines.ts";
import type { Manifest } from "./manifest.ts";
import { loadTokenizerFile, type TextTokenizer } from "./tokenizer.ts";
import { TOKENS_DIR, tokensCardFeatures, TokensRow } from "./tokens.ts";

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

/** The ids of the conversation as rendered again, through the last assistant turn's end-of-turn token. */
export function renderedIds(row: TokensRow, tokenizer: TextTokenizer): number[] {
  const messages = row.messages as unknown as EpisodeRow["messages"];
  const last = messages.map((m) => m.role).lastIndexOf("assistant");
  const text = renderChatML(messages.slice(0, last), row.tools ?? undefined) + assistantBody(messages[last]!) + IM_END;
  return tokenizer.encode(text);
}

export async function validateTokens(dir: string, manifest: Manifest, problem: (p: string) => void, tokenizerPath?: string): Promise<TokensReport | undefined> {
  const files = manifest.files.filter((f) => f.path.startsWith(`${TOKENS_DIR}/`));
  if (!files.length && !tokenizerPath) return undefined;
  const tokenizer = tokenizerPath ? loadTokenizerFile(tokenizerPath) : undefined;
  const report: TokensReport = { rows: 0, ...(tokenizer ? { retokenized: { differ: 0, examples: [] } } : {}) };
  for (const f of files) {
    let n = 0;
    for await (const line of readLines(join(dir, f.path))) {
      if (!line.text.trim()) continue;
      n++;
      const where = `${f.path}:${line.lineNo}`;
      let json: unknown;
      try {
        json = JSON.parse(line.text);
      } catch {
        problem(`${where}: not JSON`);
        continue;
      }
      const parsed = TokensRow.safeParse(json);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        problem(`${where}: ${issue.path.join(".") || "(row)"}: ${issue.message}`);
        continue;
      }
      const row = parsed.data;
      if (!tokenizer || !report.retokenized) continue;
      const sampled = row.prompt_ids.concat(row.completion_ids);
      const again = renderedIds(row, tokenizer);
      if (again.length === sampled.length && firstDifference(again, sampled) === again.length) continue;
      report.retokenized.differ++;
      if (report.retokenized.examples.length < 3) {
        const at = firstDifference(again, sampled);
        report.retokenized.examples.push(`${where} (${row.suite}/${row.task_id}): from id ${at} of ${sampled.length}, ${JSON.stringify(sampled.slice(at, at + 4))} sampled vs ${JSON.stringify(again.slice(at, at + 4))} rendered again`);
      }
    }
    report.rows += n;
    if (n !== f.rows) problem(`${f.path}: ${n} rows, manifest.json says ${f.rows}`);
  }
  const cardPath = join(dir, "README.md");
  if (files.length && existsSync(cardPath)) {
    const header = /^---\n([\s\S]*?)\n---\n/.exec(readFileSync(cardPath, "utf8"));
    try {
      const info = header ? (parse(header[1]!) as { dataset_info?: unknown }).dataset_info : undefined;
      const tokens = Array.isArray(info) ? (info as { config_name?: string; features?: unknown }[]).find((i) => i.config_name === "tokens") : undefined;
      if (!tokens) problem("README.md: dataset_info has no tokens config");
      else if (JSON.stringify(tokens.features) !== JSON.stringify(tokensCardFeatures())) problem("README.md: the tokens config's features differ from the tokens row schema");
    } catch {
      // the default config's check names a header that does not parse
    }
  }
  return report;
}
