// Token-level JSON re-formatting that keeps every lexeme (numbers like 5.0, string escapes) as written.
// HAPI's pretty style: two-space indent, `"key": value`, arrays inline: `[ "a", "b" ]`, `[ {` ... `}, {` ... `} ]`.

const QUOTE = 34; // "
const BACKSLASH = 92;
const LBRACE = 123;
const RBRACE = 125;
const LBRACKET = 91;
const RBRACKET = 93;
const COMMA = 44;
const COLON = 58;

const pads: string[] = [];
function pad(n: number): string {
  let p = pads[n];
  if (p === undefined) {
    p = "\n" + " ".repeat(n);
    pads[n] = p;
  }
  return p;
}

function isWhitespace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/** End index (exclusive) of the string token starting at `start` (which holds the opening quote). */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  for (;;) {
    const q = text.indexOf('"', i);
    if (q < 0) throw new SyntaxError(`unterminated string at ${start}`);
    let backslashes = 0;
    for (let k = q - 1; text.charCodeAt(k) === BACKSLASH; k--) backslashes++;
    if (backslashes % 2 === 0) return q + 1;
    i = q + 1;
  }
}

/**
 * Re-format valid JSON text in HAPI's pretty style. `indent` is the column of the line holding
 * the value's first character, so nested output lines up when the result is spliced into a
 * larger document at that depth (e.g. indent 4 for a Bundle entry's `resource`).
 */
export function prettyJson(text: string, indent = 0): string {
  const out: string[] = [];
  // Per open container: is it an object, the indent of its own line, and whether it has members yet.
  const isObject: boolean[] = [];
  const lineIndent: number[] = [];
  const n = text.length;
  let top = -1;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (isWhitespace(c)) {
      i++;
      continue;
    }
    if (c === RBRACE) {
      out.push(out[out.length - 1] === "{" ? " }" : pad(lineIndent[top]!) + "}");
      isObject.pop();
      lineIndent.pop();
      top--;
      i++;
      continue;
    }
    if (c === RBRACKET) {
      out.push(" ]");
      isObject.pop();
      lineIndent.pop();
      top--;
      i++;
      continue;
    }
    if (c === COMMA) {
      out.push(",");
      i++;
      continue;
    }
    if (c === COLON) {
      out.push(": ");
      i++;
      continue;
    }
    // A key or a value starts here: place it within its container.
    let ownLine = indent;
    if (top >= 0) {
      if (isObject[top]) {
        if (out[out.length - 1] !== ": ") out.push(pad(lineIndent[top]! + 2));
        ownLine = lineIndent[top]! + 2;
      } else {
        out.push(" ");
        ownLine = lineIndent[top]!;
      }
    }
    if (c === LBRACE || c === LBRACKET) {
      out.push(c === LBRACE ? "{" : "[");
      isObject.push(c === LBRACE);
      lineIndent.push(ownLine);
      top++;
      i++;
      continue;
    }
    let end: number;
    if (c === QUOTE) end = stringEnd(text, i);
    else {
      end = i + 1;
      while (end < n) {
        const d = text.charCodeAt(end);
        if (d === COMMA || d === RBRACE || d === RBRACKET || d === COLON || isWhitespace(d)) break;
        end++;
      }
    }
    out.push(text.slice(i, end));
    i = end;
  }
  return out.join("");
}

/** Remove all insignificant whitespace, keeping lexemes. */
export function compactJson(text: string): string {
  const out: string[] = [];
  const n = text.length;
  let i = 0;
  let runStart = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i);
      continue;
    }
    if (isWhitespace(c)) {
      if (i > runStart) out.push(text.slice(runStart, i));
      while (i < n && isWhitespace(text.charCodeAt(i))) i++;
      runStart = i;
      continue;
    }
    i++;
  }
  if (runStart < n) out.push(text.slice(runStart));
  return out.join("");
}

/** Shift pretty text rendered at `from` indent to `to` indent (JSON strings never hold raw newlines). */
export function reindent(pretty: string, from: number, to: number): string {
  if (from === to) return pretty;
  if (from > to) return pretty.replaceAll(pad(from).slice(0, from - to + 1), "\n");
  return pretty.replaceAll("\n", pad(to - from));
}
