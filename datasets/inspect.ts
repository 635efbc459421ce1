// `dataset inspect`: counts from the manifest, and one row rendered as a chat.
import { join } from "node:path";
import { readLines } from "./lines.ts";
import { DatasetError, readManifest } from "./manifest.ts";
import { renderChat } from "./render.ts";
import { TrlRow } from "./schema.ts";

export async function inspectDataset(dir: string, opts: { row?: number } = {}): Promise<string> {
  const m = readManifest(dir);
  const lines = [
    `${m.name} (${m.license}), built by ehrgym ${m.ehrgym_version} from ${m.inputs.length} input file(s)`,
    ...m.splits.map((s) => `  ${s.name.padEnd(12)} ${String(s.rows).padStart(9)} rows`),
    `  ${Object.entries(m.counts)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}`,
    ...m.files.map((f) => `  ${f.path.padEnd(44)} ${String(f.rows).padStart(9)} rows ${String(f.bytes).padStart(12)} bytes`),
  ];
  const want = opts.row ?? 0;
  let seen = 0;
  for (const f of m.files.filter((x) => x.path.startsWith("data/") && x.path.endsWith(".jsonl"))) {
    if (seen + f.rows <= want) {
      seen += f.rows;
      continue;
    }
    for await (const line of readLines(join(dir, f.path))) {
      if (!line.text) continue;
      if (seen++ < want) continue;
      const parsed = TrlRow.safeParse(JSON.parse(line.text));
      if (!parsed.success) throw new DatasetError(`${f.path}:${line.lineNo}: not a dataset row (run \`ehrgym dataset validate\`)`);
      return `${lines.join("\n")}\n\nrow ${want} (${f.path}:${line.lineNo})\n${renderChat(parsed.data)}`;
    }
  }
  throw new DatasetError(`--row ${want}: the dataset has ${seen} rows`);
}
