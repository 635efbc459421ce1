// Python string semantics the official harness relies on: str.strip with Python's whitespace, slicing by code point.

// Python str.isspace() characters (all in the BMP, so one UTF-16 unit each).
const PY_SPACE = new Set([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003,
  0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);

/** Python `str.strip()` (JS trim() differs: it strips U+FEFF and keeps U+001C..U+001F and U+0085). */
export function pyStrip(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && PY_SPACE.has(s.charCodeAt(start))) start++;
  while (end > start && PY_SPACE.has(s.charCodeAt(end - 1))) end--;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

/** Python `str.lstrip()`. */
export function pyLstrip(s: string): string {
  let start = 0;
  while (start < s.length && PY_SPACE.has(s.charCodeAt(start))) start++;
  return start === 0 ? s : s.slice(start);
}

/** Python `s[:-1]`: drops the last code point (a surrogate pair counts as one). */
export function dropLastCodePoint(s: string): string {
  if (s.length === 0) return s;
  const last = s.charCodeAt(s.length - 1);
  if (last >= 0xdc00 && last <= 0xdfff && s.length >= 2) {
    const prev = s.charCodeAt(s.length - 2);
    if (prev >= 0xd800 && prev <= 0xdbff) return s.slice(0, -2);
  }
  return s.slice(0, -1);
}
