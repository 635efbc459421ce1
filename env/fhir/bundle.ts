// Searchset Bundles and OperationOutcomes rendered as text, in HAPI's pretty style or compact.
// Entry resources arrive pre-rendered at ENTRY_INDENT, so a reply is string concatenation only.
import { escapeJson } from "./json.ts";
import { compactJson, prettyJson } from "./pretty.ts";

export interface BundleLink {
  relation: string;
  url: string;
}

/** A page's entries, in order. A searchset entry's pretty text is the same for a row every time, so
 *  it is made once per row (see HitEntries in service.ts) and a reply only strings them together. */
export interface BundleEntries {
  readonly length: number;
  fullUrl(i: number): string;
  /** The resource as pretty text at ENTRY_INDENT. */
  resource(i: number): string;
  /** The whole entry, `{ "fullUrl", "resource", "search" }`, pretty at ENTRY_INDENT, no separator. */
  block(i: number): string;
  /** `block(i)` JSON-escaped (no quotes). */
  blockJson(i: number): string;
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
const ENTRY_TAIL_JSON = escapeJson(ENTRY_TAIL);

/** An entry's pretty text (what `block` returns), from its parts. */
export function entryBlock(fullUrl: string, resource: string): string {
  return ENTRY_HEAD + q(fullUrl) + ENTRY_RESOURCE + resource + ENTRY_TAIL;
}

/** `escapeJson(entryBlock(fullUrl, resource))`, given the resource text already escaped. */
export function entryBlockJson(fullUrl: string, resourceJson: string): string {
  return escapeJson(ENTRY_HEAD + q(fullUrl) + ENTRY_RESOURCE) + resourceJson + ENTRY_TAIL_JSON;
}

const same = (s: string): string => s;
const plainBlock = (e: BundleEntries, i: number): string => e.block(i);
const jsonBlock = (e: BundleEntries, i: number): string => e.blockJson(i);

/**
 * `JSON.stringify(renderBundle(b, true))`, built from the escaped forms of the parts: the entries'
 * escaped texts are cached per row, so a server that sends replies inside JSON does not escape the
 * same resource text again on every request.
 */
export function bundleJsonString(b: BundleParts): string {
  return `"${prettyBundle(b, escapeJson, jsonBlock)}"`;
}

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
  return prettyBundle(b, same, plainBlock);
}

/** The pretty rendering, every piece but the entries passed through `piece` (identity or JSON escaping). */
function prettyBundle(b: BundleParts, piece: (s: string) => string, entry: (e: BundleEntries, i: number) => string): string {
  // Concatenation, not join: the entries are long-lived strings, and a rope of them is built in
  // O(entries) with two small nodes per entry; whoever needs the flat text (a socket write, a
  // tokenizer) copies it once, then. (An episode's history keeps these ropes for its lifetime.)
  let s = piece(`{\n  "resourceType": "Bundle",\n  "id": ${q(b.id)},\n  "meta": {\n    "lastUpdated": ${q(b.lastUpdated)}\n  },\n  "type": "searchset"`);
  if (b.total !== undefined) s += piece(`,\n  "total": ${b.total}`);
  s += piece(`,\n  "link": [ `);
  for (let i = 0; i < b.links.length; i++) {
    const l = b.links[i]!;
    s += piece(`${i === 0 ? "" : ", "}{\n    "relation": ${q(l.relation)},\n    "url": ${q(l.url)}\n  }`);
  }
  s += piece(" ]");
  const n = b.entries.length;
  if (n) {
    s += piece(`,\n  "entry": [ `) + entry(b.entries, 0);
    for (let i = 1; i < n; i++) s += ", " + entry(b.entries, i);
    s += piece(" ]");
  }
  return s + piece("\n}");
}

export type IssueSeverity = "fatal" | "error" | "warning" | "information";

export function renderOperationOutcome(severity: IssueSeverity, code: string, diagnostics: string, pretty: boolean): string {
  const compact = JSON.stringify({ resourceType: "OperationOutcome", issue: [{ severity, code, diagnostics }] });
  return pretty ? prettyJson(compact) : compact;
}
