// The measured process of the datasets bench: one build, its wall time as JSON on stdout.
import { buildDataset } from "../../datasets/index.ts";

const [input, out] = process.argv.slice(2);
const t0 = performance.now();
const r = await buildDataset({
  inputs: [input!],
  out: out!,
  keep: "correct",
  dedupe: false,
  splits: [
    { name: "train", fraction: 0.9 },
    { name: "validation", fraction: 0.05 },
    { name: "test", fraction: 0.05 },
  ],
  seed: 0,
  excludeMrnsFrom: [],
  formats: ["trl", "openai", "arrow"],
  name: "bench",
  license: "mit",
  shardRows: 50_000,
  force: true,
});
const seconds = (performance.now() - t0) / 1000;
console.log(JSON.stringify({ seconds, rows: r.rows, outBytes: r.manifest.files.reduce((n, f) => n + f.bytes, 0) }));
