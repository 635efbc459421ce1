// Row values straight into Arrow column buffers (offsets, UTF-8 bytes, validity bits), one writer per
// column of the row schema, made into apache-arrow Data for its IPC writer. apache-arrow's builders
// (vectorFromArray over row objects) encode every string into a fresh array and grow their buffers by
// copying; a batch holds ~4 MB of transcripts, written here once into buffers sized for it.
import { LongText } from "./rowline.ts";
import { DataType, makeData, Precision, Type, type Data, type Field, type Float64, type Int64, type List, type Struct, type Utf8 } from "apache-arrow";

/** Validity bits, LSB first (Arrow's layout); undefined until a null is seen (Arrow allows no bitmap then). */
class Validity {
  private bits: Uint8Array | undefined;
  nulls = 0;
  set(i: number, valid: boolean): void {
    if (valid && !this.bits) return;
    if (!this.bits) {
      this.bits = new Uint8Array(Math.max(8, (i >> 3) + 1) * 2);
      // every value before this one was valid
      this.bits.fill(0xff, 0, i >> 3);
      for (let k = (i >> 3) << 3; k < i; k++) this.bits[k >> 3]! |= 1 << (k & 7);
    } else if (this.bits.length <= i >> 3) {
      const grown = new Uint8Array(this.bits.length * 2);
      grown.set(this.bits);
      this.bits = grown;
    }
    if (valid) this.bits[i >> 3]! |= 1 << (i & 7);
    else this.nulls++;
  }
  bitmap(length: number): Uint8Array | undefined {
    return this.bits?.subarray(0, (length + 7) >> 3);
  }
  /** Empty again; a bitmap handed out before is not to be read after this. */
  reset(): void {
    this.bits = undefined;
    this.nulls = 0;
  }
}

export interface ColumnWriter {
  add(value: unknown): void;
  /** The column so far, as Data over this writer's buffers (valid until reset). */
  finish(): Data;
  /** Empty again, keeping its buffers (a batch's Data is serialized before the next is written). */
  reset(): void;
}

function grownInts<T extends Int32Array | Float64Array | BigInt64Array>(a: T, need: number, make: (n: number) => T): T {
  if (need <= a.length) return a;
  const b = make(Math.max(need, a.length * 2));
  b.set(a as never);
  return b;
}

class StringWriter implements ColumnWriter {
  private offsets = new Int32Array(64);
  private bytes: Buffer;
  private used = 0;
  private n = 0;
  private readonly valid = new Validity();
  constructor(private readonly type: Utf8) {
    this.bytes = Buffer.allocUnsafeSlow(1024);
  }
  add(value: unknown): void {
    this.offsets = grownInts(this.offsets, this.n + 2, (k) => new Int32Array(k));
    if (typeof value === "string") this.write(value);
    // A LongText's parts encode as their slices of the whole text do (no surrogate pair is split).
    else if (value instanceof LongText) for (const part of value.parts) this.write(part);
    this.valid.set(this.n, typeof value === "string" || value instanceof LongText);
    this.offsets[++this.n] = this.used;
  }
  private write(text: string): void {
    const room = this.bytes.length - this.used;
    if (text.length * 3 > room) {
      const need = Buffer.byteLength(text);
      if (need > room) {
        const grown = Buffer.allocUnsafeSlow(Math.max(this.bytes.length * 2, this.used + need));
        this.bytes.copy(grown, 0, 0, this.used);
        this.bytes = grown;
      }
    }
    this.used += this.bytes.write(text, this.used);
  }
  finish(): Data {
    return makeData({ type: this.type, length: this.n, nullCount: this.valid.nulls, nullBitmap: this.valid.bitmap(this.n), valueOffsets: this.offsets.subarray(0, this.n + 1), data: this.bytes.subarray(0, this.used) });
  }
  reset(): void {
    this.n = 0;
    this.used = 0;
    this.valid.reset();
  }
}

/** Int64 (as BigInt64Array) or Float64 values: one number per row, 0 under a null. */
class NumberWriter<T extends Int64 | Float64> implements ColumnWriter {
  private values: BigInt64Array | Float64Array;
  private n = 0;
  private readonly valid = new Validity();
  constructor(private readonly type: T) {
    this.values = this.make(64);
  }
  private make(n: number): BigInt64Array | Float64Array {
    return DataType.isInt(this.type) ? new BigInt64Array(n) : new Float64Array(n);
  }
  add(value: unknown): void {
    this.values = grownInts(this.values, this.n + 1, (k) => this.make(k));
    const ok = typeof value === "number";
    if (this.values instanceof BigInt64Array) this.values[this.n] = ok ? BigInt(value) : 0n;
    else this.values[this.n] = ok ? value : 0;
    this.valid.set(this.n++, ok);
  }
  finish(): Data {
    return makeData({ type: this.type as DataType, length: this.n, nullCount: this.valid.nulls, nullBitmap: this.valid.bitmap(this.n), data: this.values.subarray(0, this.n) } as never);
  }
  reset(): void {
    this.n = 0;
    this.valid.reset();
  }
}

class ListWriter implements ColumnWriter {
  private offsets = new Int32Array(64);
  private n = 0;
  private items = 0;
  private readonly valid = new Validity();
  private readonly child: ColumnWriter;
  constructor(private readonly type: List) {
    this.child = columnWriter(type.children[0]!.type);
  }
  add(value: unknown): void {
    this.offsets = grownInts(this.offsets, this.n + 2, (k) => new Int32Array(k));
    const ok = Array.isArray(value);
    if (ok) for (const item of value) this.child.add(item);
    if (ok) this.items += value.length;
    this.valid.set(this.n, ok);
    this.offsets[++this.n] = this.items;
  }
  finish(): Data {
    return makeData({ type: this.type, length: this.n, nullCount: this.valid.nulls, nullBitmap: this.valid.bitmap(this.n), valueOffsets: this.offsets.subarray(0, this.n + 1), child: this.child.finish() });
  }
  reset(): void {
    this.n = 0;
    this.items = 0;
    this.valid.reset();
    this.child.reset();
  }
}

class StructWriter implements ColumnWriter {
  private n = 0;
  private readonly valid = new Validity();
  private readonly names: string[];
  private readonly children: ColumnWriter[];
  constructor(private readonly type: Struct) {
    this.names = type.children.map((f: Field) => f.name);
    this.children = type.children.map((f: Field) => columnWriter(f.type));
  }
  add(value: unknown): void {
    const ok = value !== null && typeof value === "object" && !Array.isArray(value);
    const record = ok ? (value as Record<string, unknown>) : undefined;
    for (let i = 0; i < this.children.length; i++) this.children[i]!.add(record?.[this.names[i]!] ?? null);
    this.valid.set(this.n++, ok);
  }
  finish(): Data {
    return makeData({ type: this.type, length: this.n, nullCount: this.valid.nulls, nullBitmap: this.valid.bitmap(this.n), children: this.children.map((c) => c.finish()) });
  }
  reset(): void {
    this.n = 0;
    this.valid.reset();
    for (const c of this.children) c.reset();
  }
}

/** A writer for a column of `type` (Utf8, Int64, Float64, and List and Struct of these: what the row schema maps to). */
export function columnWriter(type: DataType): ColumnWriter {
  switch (type.typeId) {
    case Type.Utf8:
      return new StringWriter(type as Utf8);
    case Type.Int:
      if ((type as Int64).bitWidth === 64 && (type as Int64).isSigned) return new NumberWriter(type as Int64);
      break;
    case Type.Float:
      if ((type as Float64).precision === Precision.DOUBLE) return new NumberWriter(type as Float64);
      break;
    case Type.List:
      return new ListWriter(type as List);
    case Type.Struct:
      return new StructWriter(type as Struct);
  }
  throw new Error(`no column writer for Arrow type ${String(type)}`);
}
