// A page of search hits as Bundle entries. A base row's entry text (fullUrl, resource, search mode)
// is the same on every reply of a service, so it is built once per row, plain and JSON-escaped.
// A page of base rows is also kept joined, as one string: rollouts of a task repeat the same
// searches, and a reply that reuses the page is then a few rope nodes, whatever its entry count
// (episode histories keep these replies, and the young-generation GC copies what they keep).
import { entryBlock, entryBlockJson, type BundleEntries } from "./bundle.ts";
import { hitEntryJson, hitEntryText, hitId, type Hit } from "./engine.ts";
import type { TypeTable } from "./table.ts";

type RowTexts = (string | undefined)[];
/** Joined pages of a table by their rows ("12,13,40"). */
type PageTexts = Map<string, string>;

/** Characters of joined pages kept per service (plain and escaped together) before they are dropped. */
const PAGE_CHARS_BUDGET = 32 * 1024 * 1024;

export class EntryTexts {
  private readonly blocks = new WeakMap<TypeTable, RowTexts>();
  private readonly blocksJson = new WeakMap<TypeTable, RowTexts>();
  private pages = new WeakMap<TypeTable, PageTexts>();
  private pagesJson = new WeakMap<TypeTable, PageTexts>();
  private pageChars = 0;

  constructor(
    readonly baseUrl: string,
    private readonly pageCharsBudget = PAGE_CHARS_BUDGET,
  ) {}

  private rows(cache: WeakMap<TypeTable, RowTexts>, table: TypeTable): RowTexts {
    let rows = cache.get(table);
    if (rows === undefined) cache.set(table, (rows = new Array<string | undefined>(table.size)));
    return rows;
  }

  fullUrl(type: string, id: string): string {
    return `${this.baseUrl}${type}/${id}`;
  }

  /** A base row's entry (built on its first use; the fullUrl too). */
  block(table: TypeTable, row: number): string {
    const rows = this.rows(this.blocks, table);
    return (rows[row] ??= entryBlock(this.fullUrl(table.type, table.ids[row]!), table.entryText(row)));
  }

  blockJson(table: TypeTable, row: number): string {
    const rows = this.rows(this.blocksJson, table);
    return (rows[row] ??= entryBlockJson(this.fullUrl(table.type, table.ids[row]!), hitEntryJson(table, row)));
  }

  /** Rows `from` .. `from + length` of `hits`, blocks joined with ", " (escaped when `json`); undefined
   *  unless every hit is a base row. */
  joined(table: TypeTable, hits: ArrayLike<Hit>, from: number, length: number, json: boolean): string | undefined {
    const rows = new Array<number>(length);
    for (let i = 0; i < length; i++) {
      const h = hits[from + i]!;
      if (typeof h !== "number") return undefined;
      rows[i] = h;
    }
    const key = rows.join(",");
    const cache = json ? this.pagesJson : this.pages;
    let pages = cache.get(table);
    const known = pages?.get(key);
    if (known !== undefined) return known;
    const text = rows.map((row) => (json ? this.blockJson(table, row) : this.block(table, row))).join(", ");
    if (this.pageChars + text.length > this.pageCharsBudget) {
      this.pages = new WeakMap();
      this.pagesJson = new WeakMap();
      this.pageChars = 0;
      pages = undefined;
    }
    if (pages === undefined) (json ? this.pagesJson : this.pages).set(table, (pages = new Map()));
    pages.set(key, text);
    this.pageChars += text.length;
    return text;
  }

  page(table: TypeTable | undefined, type: string, hits: ArrayLike<Hit>, from: number, to: number): HitEntries {
    return new HitEntries(this, table, type, hits, from, Math.max(0, to - from));
  }
}

/** Entries `from` .. `from + length` of a hit list. */
export class HitEntries implements BundleEntries {
  constructor(
    private readonly texts: EntryTexts,
    private readonly table: TypeTable | undefined,
    private readonly type: string,
    private readonly hits: ArrayLike<Hit>,
    private readonly from: number,
    readonly length: number,
  ) {}

  private hit(i: number): Hit {
    return this.hits[this.from + i]!;
  }

  fullUrl(i: number): string {
    return this.texts.fullUrl(this.type, hitId(this.table, this.hit(i)));
  }

  resource(i: number): string {
    return hitEntryText(this.table, this.hit(i));
  }

  block(i: number): string {
    const h = this.hit(i);
    return typeof h === "number" ? this.texts.block(this.table!, h) : entryBlock(this.fullUrl(i), hitEntryText(this.table, h));
  }

  blockJson(i: number): string {
    const h = this.hit(i);
    return typeof h === "number" ? this.texts.blockJson(this.table!, h) : entryBlockJson(this.fullUrl(i), hitEntryJson(this.table, h));
  }

  joined(json: boolean): string | undefined {
    return this.table === undefined ? undefined : this.texts.joined(this.table, this.hits, this.from, this.length, json);
  }
}
