// `ehrgym teacher tokenizer --out tokenizer.json`: the stand-in's tokenizer (o200k_base with ChatML's
// markers) as a Hugging Face `tokenizers` file, so `dataset validate --tokenizer`, `tokenizers` and
// transformers read the ids the stand-in returns with the tokenizer that made them. Converted the way
// tiktoken encodings are for `tokenizers`: byte-level BPE whose merges are every split of a token into
// two tokens, ordered by the merged token's rank, and `ignore_merges` (a whole piece in the vocabulary
// is one token, as tiktoken does).
import { IM_END, IM_START } from "../chatml.ts";

/** GPT-2's byte-to-unicode table (byte-level BPE): printable bytes stand for themselves, the rest move past 255. */
export function byteLevelChars(): string[] {
  const table: string[] = [];
  let shift = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    table[b] = String.fromCodePoint(printable ? b : 256 + shift++);
  }
  return table;
}

export async function standInTokenizerJson(): Promise<Record<string, unknown>> {
  const ranks = (await import("gpt-tokenizer/bpeRanks/o200k_base")).default as (string | number[])[];
  const { O200K_TOKEN_SPLIT_REGEX } = (await import("gpt-tokenizer/encodingParams/constants")) as { O200K_TOKEN_SPLIT_REGEX: RegExp };
  const chars = byteLevelChars();
  const encoder = new TextEncoder();
  // Every byte is one UTF-16 unit here, so string offsets are byte offsets.
  const ids = new Map<string, number>();
  const pieces: string[] = [];
  ranks.forEach((token, id) => {
    const bytes = typeof token === "string" ? encoder.encode(token) : Uint8Array.from(token);
    let piece = "";
    for (const b of bytes) piece += chars[b]!;
    ids.set(piece, id);
    pieces[id] = piece;
  });
  const merges: [string, string][] = [];
  pieces.forEach((piece, id) => {
    const splits: [number, number, string, string][] = [];
    for (let i = 1; i < piece.length; i++) {
      const left = piece.slice(0, i);
      const right = piece.slice(i);
      const l = ids.get(left);
      const r = ids.get(right);
      if (l !== undefined && r !== undefined && l < id && r < id) splits.push([l, r, left, right]);
    }
    if (splits.length > 1) splits.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    for (const [, , left, right] of splits) merges.push([left, right]);
  });
  const specials: [string, number][] = [
    ["<|endoftext|>", 199999],
    [IM_START, 200003],
    [IM_END, 200004],
  ];
  // In the model's vocabulary too: `tokenizers` numbers added tokens it does not find there from the
  // vocabulary's size up, whatever ids the file gives them.
  for (const [content, id] of specials) ids.set(content, id);
  const vocab = Object.fromEntries(ids);
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: specials.map(([content, id]) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
    normalizer: null,
    pre_tokenizer: {
      type: "Sequence",
      pretokenizers: [
        { type: "Split", pattern: { Regex: O200K_TOKEN_SPLIT_REGEX.source }, behavior: "Isolated", invert: false },
        { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    },
    post_processor: null,
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, ignore_merges: true, vocab, merges },
  };
}
