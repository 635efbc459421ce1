// `usage` as a real tokenizer counts it (gpt-tokenizer, o200k_base): the text of each message plus the
// names and arguments of its tool calls. Message formatting tokens and the tools list are not counted.
import type { Message } from "../../env/core/index.ts";
import type { LongText } from "../long-text.ts";
import { textDigest } from "./digest.ts";
import { longContent } from "./long-content.ts";
import { Lru } from "./lru.ts";

// The tokenizer's module builds its BPE ranks when loaded (~0.5 s): loaded by the stand-in when it
// starts, not by every command that imports rollout/.
let tokenizer: typeof import("gpt-tokenizer") | undefined;

export async function loadTokenizer(): Promise<void> {
  tokenizer ??= await import("gpt-tokenizer");
}

function countTokens(text: string): number {
  if (!tokenizer) throw new Error("the tokenizer is not loaded: await loadTokenizer() first");
  return tokenizer.countTokens(text);
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/**
 * Places where the text can be cut without changing its token count: right after a newline, when the
 * whitespace that follows holds no further line break and is followed by something other than "/".
 * o200k's pre-tokenizer never joins across such a place (no piece continues past a newline except
 * `[\r\n/]*` after punctuation and `\s*[\r\n]+` over blank lines, both excluded), and BPE merges stay
 * inside pieces, so the count of the whole is the sum of the counts of the parts.
 */
export function cutPoints(text: string): number[] {
  const cuts: number[] = [];
  for (let cut = nextCut(text, 0); cut >= 0; cut = nextCut(text, cut)) cuts.push(cut);
  return cuts;
}

/** The first cut point (see cutPoints) after `from`, or -1. */
export function nextCut(text: string, from: number): number {
  for (let i = text.indexOf("\n", from); i >= 0 && i + 1 < text.length; i = text.indexOf("\n", i + 1)) if (cutsAfter(text, i)) return i + 1;
  return -1;
}

/** The last cut point of the text, or -1. */
function lastCut(text: string): number {
  for (let i = text.lastIndexOf("\n"); i >= 0; i = i > 0 ? text.lastIndexOf("\n", i - 1) : -1) if (cutsAfter(text, i)) return i + 1;
  return -1;
}

/** Whether the newline at `i` is followed by a cut point (decided by what follows it in `text`). */
function cutsAfter(text: string, i: number): boolean {
  let j = i + 1;
  let c = text.charCodeAt(j);
  while (c === 32 || c === 9) c = text.charCodeAt(++j);
  // Not the end, not another line break or other whitespace, not a "/" right after the newline.
  return j < text.length && c !== 10 && c !== 13 && !isSpace(c) && !(j === i + 1 && c === 47);
}

const isSpace = (c: number) => (c >= 9 && c <= 13) || c === 32 || c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;

const MIN_CHUNK = 512;
const HEAD = 256;
const MIN_TAIL = 4096;
/** Tails keep the texts they were cut from alive (about one FHIR reply each, ~100 KB: ~100 MB at most). */
const MAX_TAILS = 1024;
/** Pieces of long texts (~32 KB each) remembered: ~64 MB at most. */
const MAX_SEGMENTS = 2048;

/**
 * Counts long texts chunk by chunk, remembering each chunk's count by its digest. Chunks end at cut
 * points chosen by the content that follows them (a hash of the next line's start), so two replies that
 * differ only in a few lines (a FHIR search reply's fresh bundle id and time) share all other chunks.
 */
export class TextTokens {
  private readonly chunks = new Lru<string, number>(100_000, "insertion");
  private readonly tails = new Lru<string, number>(MAX_TAILS, "insertion");
  private readonly segments = new Lru<string, number>(MAX_SEGMENTS, "insertion");

  /**
   * Long texts are counted as a head up to the first cut point after HEAD characters plus a tail
   * remembered by the tail itself: samples of a task get FHIR replies that differ only in their first
   * lines (bundle id, lastUpdated), so the rest is found whole with one lookup (V8 hashes strings this
   * long by length; equal-length keys are compared in full, so a count is never taken from another tail).
   */
  count(text: string): number {
    if (text.length < MIN_TAIL) return this.chunked(text);
    const cut = nextCut(text, HEAD);
    if (cut < 0) return this.chunked(text);
    const tail = text.slice(cut);
    let n = this.tails.get(tail);
    if (n === undefined) {
      n = this.chunked(tail);
      this.tails.set(tail, n);
    }
    return this.chunked(text.slice(0, cut)) + n;
  }

  /**
   * count(long.text()) without joining it: the text is cut at the last cut point of each part (with
   * what was left of the part before); the first piece is counted as any text, the others by segment.
   */
  countLong(long: LongText): number {
    let n = 0;
    let carry = "";
    let first = true;
    for (const part of long.parts) {
      const text = carry + part;
      const cut = lastCut(text);
      if (cut < 0) {
        carry = text;
        continue;
      }
      n += first ? this.count(text.slice(0, cut)) : this.segment(text.slice(0, cut));
      first = false;
      carry = text.slice(cut);
    }
    return n + (carry === "" ? 0 : first ? this.count(carry) : this.segment(carry));
  }

  /**
   * A piece of a long text after its first, remembered by the piece itself: parts are cut at the same
   * places in two samples' replies that differ only in their first lines (same lengths), so the pieces
   * after the first are found whole (keys are compared in full, as tails are).
   */
  private segment(text: string): number {
    let n = this.segments.get(text);
    if (n === undefined) {
      n = this.chunked(text);
      this.segments.set(text, n);
    }
    return n;
  }

  private chunked(text: string): number {
    if (text.length < 2 * MIN_CHUNK) return this.chunk(text);
    let n = 0;
    let from = 0;
    for (const cut of cutPoints(text)) {
      if (cut - from >= MIN_CHUNK && boundary(text, cut)) {
        n += this.chunk(text.slice(from, cut));
        from = cut;
      }
    }
    return n + this.chunk(text.slice(from));
  }

  private chunk(text: string): number {
    if (text.length < 64) return countTokens(text);
    const key = textDigest(text);
    let n = this.chunks.get(key);
    if (n === undefined) {
      n = this.lines.count(text);
      this.chunks.set(key, n);
    }
    return n;
  }

  private readonly lines = new LineTokens();
}

const MAX_LINES = 200_000;

/**
 * Counts a text piece by piece between all its cut points (about a line each), remembering each piece's
 * count by the piece itself: new FHIR replies are mostly lines seen before (`"system": "http://loinc.org",`),
 * so a chunk never seen whole is still counted mostly from memory. Lookups compare the text, so a count
 * is never taken from another piece.
 */
class LineTokens {
  private readonly known = new Map<string, number>();

  count(text: string): number {
    let n = 0;
    let from = 0;
    for (const cut of cutPoints(text)) {
      n += this.piece(text.slice(from, cut));
      from = cut;
    }
    return n + this.piece(text.slice(from));
  }

  private piece(text: string): number {
    let n = this.known.get(text);
    if (n === undefined) {
      n = countTokens(text);
      if (this.known.size >= MAX_LINES) this.known.clear();
      // A copy, so the key does not keep the whole text it was cut from alive.
      this.known.set((" " + text).slice(1), n);
    }
    return n;
  }
}

/** One cut point in eight, by the 24 characters after it. */
function boundary(text: string, at: number): boolean {
  let h = 0x811c9dc5;
  const end = Math.min(text.length, at + 24);
  for (let i = at; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return ((h >>> 0) & 7) === 0;
}

/** Tokens of one message by the stand-in's rule (counts the whole text at once; the reference for tests). */
export function messageTokens(m: Pick<Message, "content" | "tool_calls">, count: (text: string) => number = countTokens): number {
  let n = m.content ? count(m.content) : 0;
  for (const c of m.tool_calls ?? []) n += count(c.function.name) + count(c.function.arguments);
  return n;
}

/** The prompt repeats on every turn of an episode: counts are also remembered by message digest. */
export class TokenCounter {
  private readonly byDigest = new Lru<string, number>(50_000, "insertion");
  private readonly text = new TextTokens();
  private readonly countText = (t: string) => this.text.count(t);

  count(m: Message, digest: string): number {
    let n = this.byDigest.get(digest);
    if (n === undefined) {
      const long = longContent(m);
      n = long ? this.text.countLong(long) + messageTokens({ content: null, tool_calls: m.tool_calls }, this.countText) : messageTokens(m, this.countText);
      this.byDigest.set(digest, n);
    }
    return n;
  }

  usage(messages: readonly Message[], digests: readonly string[], reply: Message): Usage {
    let prompt = 0;
    messages.forEach((m, i) => (prompt += this.count(m, digests[i]!)));
    const completion = messageTokens(reply, this.countText);
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  }
}
