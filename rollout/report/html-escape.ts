// Text into HTML: every value that reaches the page goes through esc().
const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export const esc = (value: unknown): string => String(value).replace(/[&<>"']/g, (c) => ENTITIES[c]!);

/** An id usable in a URL fragment, from any text (stable, distinct for distinct inputs). */
export const anchorId = (...parts: string[]): string =>
  parts.map((p) => p.replace(/[^A-Za-z0-9_-]/g, (c) => `.${c.codePointAt(0)!.toString(16)}.`)).join("--");
