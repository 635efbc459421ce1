// Searchset Bundles and OperationOutcomes rendered as text, in HAPI's pretty style or compact.
// Entry resources arrive pre-rendered at ENTRY_INDENT, so a reply is string concatenation only.
import { compactJson, prettyJson } from "./pretty.ts";

export interface BundleLink {
  relation: string;
  url: string;
}

/** A page's entries, in order. A searchset entry's pretty text is the same for a row every time, so
 *  it is made once per row (see HitEntries in entries.ts) and a reply only strings them together. */
export interface BundleEntries {
  readonly length: number;
  fullUrl(i: number): string;
  /** The resource as pretty text at ENTRY_INDENT. */
  resource(i: number): string;
  /** The whole entry, `{ "fullUrl", "resource", "search" }`, pretty at ENTRY_INDENT, no separator. */
  block(i: number): string;
  /** Every block joined with ", " as one string, when the entries know it (a page of stored rows
   *  another reply already showed); undefined otherwise. */
  joined?(): string | undefined;
}

export interface BundleParts {
  id: string;
  lastUpdated: string;
  total: number | undefined;
  links: BundleLink[];
  entries: BundleEntries;
}

const q = JSON.stringify;

const ENTRY_HEAD = `{\n    "fullUrl": `;
const ENTRY_RESOURCE = `,\n    "resource": `;
const ENTRY_TAIL = `,\n    "search": {\n      "mode": "match"\n    }\n  }`;

/** An entry's pretty text (what `block` returns), from its parts. */
export function entryBlock(fullUrl: string, resource: string): string {
  return ENTRY_HEAD + q(fullUrl) + ENTRY_RESOURCE + resource + ENTRY_TAIL;
}

/** The pretty rendering of `b` as pieces in order (an entry is one piece, its text cached per row). */
function bundlePieces(b: BundleParts): string[] {
  const out: string[] = [];
  // The reply's own part (id, time, links) as one flat string: episode histories keep it.
  const head = [`{\n  "resourceType": "Bundle",\n  "id": `, q(b.id), `,\n  "meta": {\n    "lastUpdated": `, q(b.lastUpdated), `\n  },\n  "type": "searchset"`];
  if (b.total !== undefined) head.push(`,\n  "total": `, String(b.total));
  head.push(`,\n  "link": [ `);
  for (let i = 0; i < b.links.length; i++) {
    const l = b.links[i]!;
    head.push(i === 0 ? "{" : ", {", `\n    "relation": `, q(l.relation), `,\n    "url": `, q(l.url), `\n  }`);
  }
  head.push(" ]");
  const n = b.entries.length;
  if (n) head.push(`,\n  "entry": [ `);
  out.push(head.join(""));
  const joined = n > 1 ? b.entries.joined?.() : undefined;
  if (joined !== undefined) out.push(joined);
  else if (n) {
    out.push(b.entries.block(0));
    for (let i = 1; i < n; i++) out.push(", ", b.entries.block(i));
  }
  out.push(n ? ENTRIES_END : END);
  return out;
}

const END = "\n}";
const ENTRIES_END = ` ]${END}`;

export function renderBundle(b: BundleParts, pretty: boolean): string {
  if (!pretty) {
    let s = `{"resourceType":"Bundle","id":${q(b.id)},"meta":{"lastUpdated":${q(b.lastUpdated)}},"type":"searchset"`;
    if (b.total !== undefined) s += `,"total":${b.total}`;
    s += `,"link":[${b.links.map((l) => `{"relation":${q(l.relation)},"url":${q(l.url)}}`).join(",")}]`;
    const entries: string[] = [];
    for (let i = 0; i < b.entries.length; i++) entries.push(`{"fullUrl":${q(b.entries.fullUrl(i))},"resource":${compactJson(b.entries.resource(i))},"search":{"mode":"match"}}`);
    if (entries.length) s += `,"entry":[${entries.join(",")}]`;
    return s + "}";
  }
  return prettyBundle(b);
}

/** `renderBundle(b, true)` as a rope of its pieces: concatenation, not join, so the entries stay the
 *  long-lived cached strings they are and a reply costs a few small nodes (an episode's history
 *  keeps these ropes for its lifetime); whoever needs the flat text copies it once, then. */
function prettyBundle(b: BundleParts): string {
  let s = "";
  for (const p of bundlePieces(b)) s += p;
  return s;
}

export type IssueSeverity = "fatal" | "error" | "warning" | "information";

export function renderOperationOutcome(severity: IssueSeverity, code: string, diagnostics: string, pretty: boolean): string {
  const compact = JSON.stringify({ resourceType: "OperationOutcome", issue: [{ severity, code, diagnostics }] });
  return pretty ? prettyJson(compact) : compact;
}
