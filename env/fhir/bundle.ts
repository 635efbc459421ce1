// Searchset Bundles and OperationOutcomes rendered as text, in HAPI's pretty style or compact.
// Entry resources arrive pre-rendered at ENTRY_INDENT, so a reply is string concatenation only.
import { compactJson, prettyJson } from "./pretty.ts";

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
}

const q = JSON.stringify;

export function renderBundle(b: BundleParts, pretty: boolean): string {
  if (!pretty) {
    let s = `{"resourceType":"Bundle","id":${q(b.id)},"meta":{"lastUpdated":${q(b.lastUpdated)}},"type":"searchset"`;
    if (b.total !== undefined) s += `,"total":${b.total}`;
    s += `,"link":[${b.links.map((l) => `{"relation":${q(l.relation)},"url":${q(l.url)}}`).join(",")}]`;
    if (b.entries.length)
      s += `,"entry":[${b.entries.map((e) => `{"fullUrl":${q(e.fullUrl)},"resource":${compactJson(e.resource)},"search":{"mode":"match"}}`).join(",")}]`;
    return s + "}";
  }
  // Concatenation, not join: the entries are long-lived strings, and a rope of them is built in
  // O(entries); whoever needs the flat text (a socket write, a tokenizer) copies it once, then.
  let s = `{\n  "resourceType": "Bundle",\n  "id": ${q(b.id)},\n  "meta": {\n    "lastUpdated": ${q(b.lastUpdated)}\n  },\n  "type": "searchset"`;
  if (b.total !== undefined) s += `,\n  "total": ${b.total}`;
  s += `,\n  "link": [ `;
  for (let i = 0; i < b.links.length; i++) {
    const l = b.links[i]!;
    s += `${i === 0 ? "" : ", "}{\n    "relation": ${q(l.relation)},\n    "url": ${q(l.url)}\n  }`;
  }
  s += " ]";
  if (b.entries.length) {
    s += `,\n  "entry": [ `;
    for (let i = 0; i < b.entries.length; i++) {
      const e = b.entries[i]!;
      s += (i === 0 ? `{\n    "fullUrl": ` : `, {\n    "fullUrl": `) + q(e.fullUrl) + `,\n    "resource": ` + e.resource + `,\n    "search": {\n      "mode": "match"\n    }\n  }`;
    }
    s += " ]";
  }
  return s + "\n}";
}

export type IssueSeverity = "fatal" | "error" | "warning" | "information";

export function renderOperationOutcome(severity: IssueSeverity, code: string, diagnostics: string, pretty: boolean): string {
  const compact = JSON.stringify({ resourceType: "OperationOutcome", issue: [{ severity, code, diagnostics }] });
  return pretty ? prettyJson(compact) : compact;
}
