// Searchset Bundles and OperationOutcomes rendered as text, in HAPI's pretty style or compact.
// Entry resources arrive pre-rendered at ENTRY_INDENT, so a reply is string concatenation only.
import { hitEntryJson, type Hit } from "./engine.ts";
import { escapeJson } from "./json.ts";
import { compactJson, prettyJson } from "./pretty.ts";
import type { TypeTable } from "./table.ts";

export interface BundleLink {
  relation: string;
  url: string;
}

export interface BundleParts {
  id: string;
  lastUpdated: string;
  total: number | undefined;
  links: BundleLink[];
  /** fullUrl and the resource text pretty-printed at ENTRY_INDENT. */
  entries: { fullUrl: string; resource: string }[];
  /** Where the entries come from (entry i is hit `from + i`), so their JSON-escaped texts can be cached. */
  source?: { table: TypeTable | undefined; hits: ArrayLike<Hit>; from: number };
}

const q = JSON.stringify;

const same = (s: string): string => s;
const plainEntry = (b: BundleParts, i: number): string => b.entries[i]!.resource;
const jsonEntry = (b: BundleParts, i: number): string =>
  b.source ? hitEntryJson(b.source.table, b.source.hits[b.source.from + i]!) : escapeJson(b.entries[i]!.resource);

/**
 * `JSON.stringify(renderBundle(b, true))`, built from the escaped forms of the parts: the entries'
 * escaped texts are cached per row, so a server that sends replies inside JSON does not escape the
 * same resource text again on every request.
 */
export function bundleJsonString(b: BundleParts): string {
  return `"${prettyBundle(b, escapeJson, jsonEntry)}"`;
}

export function renderBundle(b: BundleParts, pretty: boolean): string {
  if (!pretty) {
    let s = `{"resourceType":"Bundle","id":${q(b.id)},"meta":{"lastUpdated":${q(b.lastUpdated)}},"type":"searchset"`;
    if (b.total !== undefined) s += `,"total":${b.total}`;
    s += `,"link":[${b.links.map((l) => `{"relation":${q(l.relation)},"url":${q(l.url)}}`).join(",")}]`;
    if (b.entries.length)
      s += `,"entry":[${b.entries.map((e) => `{"fullUrl":${q(e.fullUrl)},"resource":${compactJson(e.resource)},"search":{"mode":"match"}}`).join(",")}]`;
    return s + "}";
  }
  return prettyBundle(b, same, plainEntry);
}

/** The pretty rendering, every piece but the entry texts passed through `piece` (identity or JSON escaping). */
function prettyBundle(b: BundleParts, piece: (s: string) => string, entry: (b: BundleParts, i: number) => string): string {
  // Concatenation, not join: the entries are long-lived strings, and a rope of them is built in
  // O(entries); whoever needs the flat text (a socket write, a tokenizer) copies it once, then.
  let s = piece(`{\n  "resourceType": "Bundle",\n  "id": ${q(b.id)},\n  "meta": {\n    "lastUpdated": ${q(b.lastUpdated)}\n  },\n  "type": "searchset"`);
  if (b.total !== undefined) s += piece(`,\n  "total": ${b.total}`);
  s += piece(`,\n  "link": [ `);
  for (let i = 0; i < b.links.length; i++) {
    const l = b.links[i]!;
    s += piece(`${i === 0 ? "" : ", "}{\n    "relation": ${q(l.relation)},\n    "url": ${q(l.url)}\n  }`);
  }
  s += piece(" ]");
  if (b.entries.length) {
    s += piece(`,\n  "entry": [ `);
    const first = piece(`{\n    "fullUrl": `);
    const next = piece(`, {\n    "fullUrl": `);
    const key = piece(`,\n    "resource": `);
    const end = piece(`,\n    "search": {\n      "mode": "match"\n    }\n  }`);
    for (let i = 0; i < b.entries.length; i++) s += (i === 0 ? first : next) + piece(q(b.entries[i]!.fullUrl)) + key + entry(b, i) + end;
    s += piece(" ]");
  }
  return s + piece("\n}");
}

export type IssueSeverity = "fatal" | "error" | "warning" | "information";

export function renderOperationOutcome(severity: IssueSeverity, code: string, diagnostics: string, pretty: boolean): string {
  const compact = JSON.stringify({ resourceType: "OperationOutcome", issue: [{ severity, code, diagnostics }] });
  return pretty ? prettyJson(compact) : compact;
}
