// A page of search hits as Bundle entries. A base row's entry text (fullUrl, resource, search mode)
// is the same on every reply of a service, so it is built once per row.
// A page of base rows asked for again is also kept joined, as one string: rollouts of a task repeat
// the same searches, and a reply that reuses the page is then a few rope nodes, whatever its entry
// count (episode histories keep these replies, and the young-generation GC copies what they keep).
import { entryBlock, type BundleEntries } from "./bundle.ts";
import { hitEntryText, hitId, type Hit } from "./engine.ts";
import type { TypeTable } from "./table.ts";

type RowTexts = (string | undefined)[];
/** A page's rows and their joined text; null while the page was seen only once. */
type JoinedPage = { rows: Int32Array; text: string } | null;
/** Pages of a table by a hash of their rows. */
type PageTexts = Map<number, JoinedPage>;

/** Characters of joined pages kept per service before they are dropped. */
const PAGE_CHARS_BUDGET = 32 * 1024 * 1024;
/** Pages remembered (seen or joined) per service before they are dropped. */
const PAGES_MAX = 100_000;

export class EntryTexts {
  private readonly blocks = new WeakMap<TypeTable, RowTexts>();
  private pages = new WeakMap<TypeTable, PageTexts>();
  private pageChars = 0;
  private pageCount = 0;

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

  /**
   * Rows `from` .. `from + length` of `hits`, blocks joined with ", ", from the
   * second time the page is asked for (a one-off page is not worth a copy of its text); undefined
   * before that, or unless every hit is a base row.
   */
  joined(table: TypeTable, hits: ArrayLike<Hit>, from: number, length: number): string | undefined {
    let hash = 0x811c9dc5 ^ length; // FNV-1a over the row numbers
    for (let i = 0; i < length; i++) {
      const h = hits[from + i]!;
      if (typeof h !== "number") return undefined;
      hash = Math.imul(hash ^ h, 0x01000193);
    }
    const known = this.pages.get(table)?.get(hash);
    if (known) return sameRows(known.rows, hits, from) ? known.text : undefined; // a hash collision keeps the first page
    let page: JoinedPage = null; // first sighting: remember the hash only
    if (known === null) {
      const rows = new Int32Array(length);
      const parts = new Array<string>(length);
      for (let i = 0; i < length; i++) {
        rows[i] = hits[from + i] as number;
        parts[i] = this.block(table, rows[i]!);
      }
      page = { rows, text: parts.join(", ") };
    }
    const chars = page?.text.length ?? 0;
    if (this.pageCount >= PAGES_MAX || this.pageChars + chars > this.pageCharsBudget) this.dropPages();
    let pages = this.pages.get(table);
    if (pages === undefined) this.pages.set(table, (pages = new Map()));
    if (!pages.has(hash)) this.pageCount++;
    pages.set(hash, page);
    this.pageChars += chars;
    return page?.text;
  }

  private dropPages(): void {
    this.pages = new WeakMap();
    this.pageChars = 0;
    this.pageCount = 0;
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

  joined(): string | undefined {
    return this.table === undefined ? undefined : this.texts.joined(this.table, this.hits, this.from, this.length);
  }
}

function sameRows(rows: Int32Array, hits: ArrayLike<Hit>, from: number): boolean {
  for (let i = 0; i < rows.length; i++) if (hits[from + i] !== rows[i]) return false;
  return true;
}
