// The measured process of the datasets bench: one build, its wall time as JSON on stdout. Its one
// argument is a JSON object: inputs, out, and optionally formats (default trl,openai,arrow) and keep
// (default correct).
import { buildDataset, type Format, type Keep } from "../../datasets/index.ts";

const o = JSON.parse(process.argv[2]!) as { inputs: string[]; out: string; formats?: Format[]; keep?: Keep };
const t0 = performance.now();
const r = await buildDataset({
  inputs: o.inputs,
  out: o.out,
  keep: o.keep ?? "correct",
  dedupe: false,
  splits: [
    { name: "train", fraction: 0.9 },
    { name: "validation", fraction: 0.05 },
    { name: "test", fraction: 0.05 },
  ],
  seed: 0,
  excludeMrnsFrom: [],
  formats: o.formats ?? ["trl", "openai", "arrow"],
  name: "bench",
  license: "mit",
  shardRows: 50_000,
  force: true,
});
const seconds = (performance.now() - t0) / 1000;
const configs = Object.fromEntries((r.manifest.configs ?? []).map((c) => [c.name, c.splits.reduce((n, s) => n + s.rows, 0)]));
console.log(JSON.stringify({ seconds, rows: r.rows, configs, outBytes: r.manifest.files.reduce((n, f) => n + f.bytes, 0) }));
