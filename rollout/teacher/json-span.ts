// Where a top-level array lies in the bytes of a JSON object, without parsing it: the byte offsets of the
// `[` and `]` of `{"key": [...]}`. Meant for text JSON.parse has already accepted (it does not validate).
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

const isWhitespace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipWhitespace(b: Uint8Array, i: number): number {
  while (isWhitespace(b[i])) i++;
  return i;
}

/** The offset just past the string that opens at `i`. */
function stringEnd(b: Buffer, i: number): number {
  let from = i + 1;
  for (;;) {
    const q = b.indexOf(QUOTE, from);
    if (q < 0) return b.length;
    let slashes = 0;
    while (b[q - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** The offset just past the value that starts at `i`. */
function valueEnd(b: Buffer, i: number): number {
  let depth = 0;
  do {
    const c = b[i];
    if (c === QUOTE) i = stringEnd(b, i);
    else {
      if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
      else if (depth === 0) {
        // A number, true, false or null.
        while (i < b.length && !isWhitespace(b[i]) && b[i] !== COMMA && b[i] !== CLOSE_BRACE && b[i] !== CLOSE_BRACKET) i++;
        return i;
      }
      i++;
    }
  } while (depth > 0 && i < b.length);
  return i;
}

/**
 * The offsets of the `[` and `]` of the array under `key` in the top-level object, or undefined when
 * the text is no object, the key is absent, not an array, given twice, or any key is written with escapes
 * (JSON.parse would read `"k\u0065y"` as `key`; such bodies are simply not located).
 */
export function arraySpan(b: Buffer, key: string): { open: number; close: number } | undefined {
  const want = Buffer.from(JSON.stringify(key));
  let i = skipWhitespace(b, 0);
  if (b[i] !== OPEN_BRACE) return undefined;
  i = skipWhitespace(b, i + 1);
  let found: { open: number; close: number } | undefined;
  let duplicate = false;
  while (b[i] === QUOTE) {
    const keyEnd = stringEnd(b, i);
    const name = b.subarray(i, keyEnd);
    if (name.includes(BACKSLASH)) return undefined;
    i = skipWhitespace(b, keyEnd);
    if (b[i] !== COLON) return undefined;
    i = skipWhitespace(b, i + 1);
    const end = valueEnd(b, i);
    if (name.equals(want)) {
      if (found) duplicate = true;
      found = b[i] === OPEN_BRACKET ? { open: i, close: end - 1 } : undefined;
    }
    i = skipWhitespace(b, end);
    if (b[i] !== COMMA) break;
    i = skipWhitespace(b, i + 1);
  }
  return duplicate ? undefined : found;
}
