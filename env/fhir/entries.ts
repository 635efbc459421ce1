// A page of search hits as Bundle entries. A base row's entry text (fullUrl, resource, search mode)
// is the same on every reply of a service, so it is built once per row, plain and JSON-escaped;
// a reply is then two small rope nodes per entry (and an episode history keeps no more than that).
import { entryBlock, entryBlockJson, type BundleEntries } from "./bundle.ts";
import { hitEntryJson, hitEntryText, hitId, type Hit } from "./engine.ts";
import type { TypeTable } from "./table.ts";

type RowTexts = (string | undefined)[];

export class EntryTexts {
  private readonly blocks = new WeakMap<TypeTable, RowTexts>();
  private readonly blocksJson = new WeakMap<TypeTable, RowTexts>();

  constructor(readonly baseUrl: string) {}

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
}
