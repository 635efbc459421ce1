// A Hugging Face `tokenizers` file (tokenizer.json) read for `dataset validate --tokenizer` and
// `dataset build --tokenizer` (length figures, --max-tokens): the
// byte-level BPE kind (GPT-2, Llama 3, Qwen, and what `ehrgym teacher tokenizer` writes): added tokens
// matched first, a Split regex and/or ByteLevel pre-tokenizer, BPE merges by rank (`ignore_merges`
// honoured). Other kinds (SentencePiece/Unigram, normalizers) are refused with the field that says so.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { z } from "zod";
import { byteLevelChars } from "../rollout/index.ts";
import { DatasetError } from "./manifest.ts";

const GPT2_PATTERN = String.raw`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`;

const ByteLevel = z.object({ type: z.literal("ByteLevel"), add_prefix_space: z.literal(false, "add_prefix_space must be false").optional(), use_regex: z.boolean().default(true) });
const Split = z.object({ type: z.literal("Split"), pattern: z.object({ Regex: z.string() }), behavior: z.literal("Isolated", "only the Isolated behaviour is read"), invert: z.literal(false) });
const PreTokenizer = z.union([ByteLevel, z.object({ type: z.literal("Sequence"), pretokenizers: z.array(z.union([Split, ByteLevel])).min(1) })]);

const TokenizerFile = z.object({
  added_tokens: z.array(z.object({ id: z.int().min(0), content: z.string().min(1) })).default([]),
  normalizer: z.null("normalizers are not read").optional(),
  pre_tokenizer: PreTokenizer,
  model: z.object({
    type: z.literal("BPE", "only BPE models are read"),
    vocab: z.record(z.string(), z.int().min(0)),
    merges: z.array(z.union([z.tuple([z.string(), z.string()]), z.string()])),
    ignore_merges: z.boolean().default(false),
    byte_fallback: z.literal(false, "byte_fallback models are not read").optional(),
  }),
});

// `tokenizers` patterns are Oniguruma's: JS (Node 20) has no inline `(?i:...)` group, so each is spelt out.
function jsPattern(pattern: string): RegExp {
  const spelt = pattern.replace(/\(\?i:([^()]*)\)/g, (_m, body: string) => `(?:${body.replace(/[A-Za-z]/g, (c) => `[${c.toLowerCase()}${c.toUpperCase()}]`)})`);
  return new RegExp(spelt, "gu");
}

export interface TextTokenizer {
  encode(text: string): number[];
  /** The file's sha256 (what a card names it by) and its number of ids (vocabulary and added tokens). */
  readonly sha256: string;
  readonly size: number;
}

export function loadTokenizerFile(path: string): TextTokenizer {
  let json: unknown;
  let raw: Buffer;
  try {
    raw = readFileSync(path);
    json = JSON.parse(raw.toString("utf8"));
  } catch (err) {
    throw new DatasetError(`--tokenizer ${path}: not a readable JSON file (${(err as Error).message})`);
  }
  const parsed = TokenizerFile.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new DatasetError(`--tokenizer ${path}: unsupported tokenizer.json: ${issue.path.join(".") || "(file)"}: ${issue.message} (byte-level BPE files are read)`);
  }
  const f = parsed.data;
  const vocab = new Map(Object.entries(f.model.vocab));
  const ranks = new Map<string, number>();
  f.model.merges.forEach((m, i) => ranks.set(Array.isArray(m) ? `${m[0]} ${m[1]}` : m, i));
  const steps = f.pre_tokenizer.type === "Sequence" ? f.pre_tokenizer.pretokenizers : [f.pre_tokenizer];
  const patterns = steps.map((s) => (s.type === "Split" ? jsPattern(s.pattern.Regex) : s.use_regex ? jsPattern(GPT2_PATTERN) : undefined)).filter((p): p is RegExp => p !== undefined);
  const added = [...f.added_tokens].sort((a, b) => b.content.length - a.content.length);
  const addedSplit = added.length ? new RegExp(`(${added.map((t) => t.content.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})`) : undefined;
  const addedIds = new Map(added.map((t) => [t.content, t.id]));
  const chars = byteLevelChars();
  const encoder = new TextEncoder();
  const cache = new Map<string, number[]>();

  const bpe = (piece: string): number[] => {
    const whole = vocab.get(piece);
    if (f.model.ignore_merges && whole !== undefined) return [whole];
    let symbols = [...piece];
    for (;;) {
      let best = -1;
      let bestRank = Infinity;
      for (let i = 0; i + 1 < symbols.length; i++) {
        const r = ranks.get(`${symbols[i]} ${symbols[i + 1]}`);
        if (r !== undefined && r < bestRank) [best, bestRank] = [i, r];
      }
      if (best < 0) break;
      const a = symbols[best]!;
      const b = symbols[best + 1]!;
      const merged: string[] = [];
      for (let i = 0; i < symbols.length; i++) {
        if (i + 1 < symbols.length && symbols[i] === a && symbols[i + 1] === b) {
          merged.push(a + b);
          i++;
        } else merged.push(symbols[i]!);
      }
      symbols = merged;
    }
    return symbols.map((s) => {
      const id = vocab.get(s);
      if (id === undefined) throw new DatasetError(`--tokenizer ${path}: no id for the piece ${JSON.stringify(s)}`);
      return id;
    });
  };

  const pieces = (text: string): string[] => {
    let parts = [text];
    for (const re of patterns) parts = parts.flatMap((p) => p.match(re) ?? []);
    return parts;
  };

  const encodeText = (text: string, out: number[]) => {
    for (const p of pieces(text)) {
      let key = "";
      for (const b of encoder.encode(p)) key += chars[b]!;
      let ids = cache.get(key);
      if (!ids) cache.set(key, (ids = bpe(key)));
      for (const id of ids) out.push(id);
    }
  };

  return {
    sha256: createHash("sha256").update(raw).digest("hex"),
    size: new Set([...vocab.values(), ...addedIds.values()]).size,
    encode(text: string): number[] {
      const out: number[] = [];
      for (const part of addedSplit ? text.split(addedSplit) : [text]) {
        const id = addedIds.get(part);
        if (id !== undefined) out.push(id);
        else if (part) encodeText(part, out);
      }
      return out;
    },
  };
}
