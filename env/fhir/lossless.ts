// JSON.parse that keeps number lexemes JS would change ("5.0", "1e2", huge integers) as Decimal,
// so stringifyCompact(parseLossless(t)) reproduces every number of t exactly.
import { Decimal } from "./json.ts";

const MARK = "\u0000#dec:";

function numberEnd(text: string, i: number): number {
  let end = i;
  for (;;) {
    const d = text.charCodeAt(end);
    // digits, '-', '+', '.', 'e', 'E'
    if ((d >= 48 && d <= 57) || d === 45 || d === 43 || d === 46 || d === 101 || d === 69) end++;
    else return end;
  }
}

/** Parse JSON text; numbers whose lexeme differs from String(Number(lexeme)) become Decimal. */
export function parseLossless(text: string): unknown {
  let out: string[] | undefined;
  let last = 0;
  const n = text.length;
  for (let i = 0; i < n; ) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // skip a string
      let j = i + 1;
      for (;;) {
        const q = text.indexOf('"', j);
        if (q < 0) return JSON.parse(text); // let JSON.parse report the error
        let b = 0;
        for (let k = q - 1; text.charCodeAt(k) === 92; k--) b++;
        j = q + 1;
        if (b % 2 === 0) break;
      }
      i = j;
      continue;
    }
    if (c === 45 || (c >= 48 && c <= 57)) {
      const end = numberEnd(text, i);
      const lexeme = text.slice(i, end);
      if (String(Number(lexeme)) !== lexeme) {
        out ??= [];
        out.push(text.slice(last, i), JSON.stringify(MARK + lexeme));
        last = end;
      }
      i = end;
      continue;
    }
    i++;
  }
  if (!out) return JSON.parse(text);
  out.push(text.slice(last));
  return JSON.parse(out.join(""), (_key, value: unknown) =>
    typeof value === "string" && value.startsWith(MARK) ? new Decimal(value.slice(MARK.length)) : value,
  );
}

/** A plain copy with Decimals turned into numbers (what JSON.parse would have given). */
export function toPlain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
