// FHIR decimals keep their lexical form ("5.0" stays "5.0", as HAPI renders it).
// Producers that build resources as objects wrap such numbers in Decimal and
// serialize with stringifyCompact; the store keeps that text and renders from it.

export class Decimal {
  constructor(readonly raw: string) {
    if (!/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(raw)) throw new Error(`not a JSON number: ${raw}`);
  }
  toJSON(): number {
    return Number(this.raw);
  }
}

/** A decimal with a fixed number of fraction digits, e.g. decimal(5, 1) -> 5.0 */
export function decimal(value: number, fractionDigits: number): Decimal {
  return new Decimal(value.toFixed(fractionDigits));
}

/** JSON.stringify without whitespace, emitting Decimal values with their raw lexeme. */
export function stringifyCompact(value: unknown): string {
  if (value instanceof Decimal) return value.raw;
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : stringifyCompact(v))).join(",")}]`;
  const parts: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || typeof v === "function") continue;
    parts.push(`${JSON.stringify(k)}:${stringifyCompact(v)}`);
  }
  return `{${parts.join(",")}}`;
}

/** A string's JSON-escaped form without the quotes: `JSON.stringify(s)` is `"` + escapeJson(s) + `"`. */
export function escapeJson(s: string): string {
  return JSON.stringify(s).slice(1, -1);
}

/** Texts longer than this are worth writing through escapedSlices. */
export const ESCAPE_SLICE = 8192;

/**
 * JSON.stringify(text) without its quotes, in pieces of about `slice` code units. A long
 * JSON.stringify result is a rope V8 flattens (copies) before it can be written, and one of over
 * 128 KB is a large object mapped fresh: writers of long texts write these pieces instead.
 */
export function* escapedSlices(text: string, slice = ESCAPE_SLICE): Generator<string> {
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + slice);
    // A surrogate pair stays in one slice (split, each half would be escaped as a lone surrogate).
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    yield JSON.stringify(text.slice(start, end)).slice(1, -1);
    start = end;
  }
}
