// Converted rows parked on disk between the two passes: appended once, read back by offset in
// output order. Memory holds a write buffer, never the rows.
import { closeSync, openSync, readSync } from "node:fs";
import { writeAllv } from "./files.ts";

const FLUSH_AT = 4 << 20;

export class Spill {
  private readonly fd: number;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private size = 0;
  private flushed = 0;

  constructor(path: string) {
    this.fd = openSync(path, "w+");
  }

  /** Appends; returns where the bytes landed. */
  append(text: string): { off: number; len: number } {
    const buf = Buffer.from(text);
    const at = { off: this.size, len: buf.length };
    this.pending.push(buf);
    this.pendingBytes += buf.length;
    this.size += buf.length;
    if (this.pendingBytes >= FLUSH_AT) this.flush();
    return at;
  }

  private flush(): void {
    if (!this.pendingBytes) return;
    this.flushed += writeAllv(this.fd, this.pending, this.flushed);
    this.pending = [];
    this.pendingBytes = 0;
  }

  read(off: number, len: number): Buffer {
    this.flush();
    const buf = Buffer.allocUnsafe(len);
    for (let got = 0; got < len; ) {
      const n = readSync(this.fd, buf, got, len - got, off + got);
      if (n === 0) throw new Error(`spill file ended early at ${off + got}`);
      got += n;
    }
    return buf;
  }

  close(): void {
    closeSync(this.fd);
  }
}
