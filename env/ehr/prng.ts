// Seeded PRNG (sfc32) and sampling helpers. Everything random in the generator goes through
// this so that the same seed gives byte-identical output on any machine.

/** 32-bit FNV-1a over the text, used to derive independent sub-seeds ("patient 17", "faker"). */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number | string) {
    const s = typeof seed === "number" ? seed >>> 0 : hash32(seed);
    this.a = 0x9e3779b9;
    this.b = 0x243f6a88;
    this.c = 0xb7e15162;
    this.d = s;
    for (let i = 0; i < 15; i++) this.next32();
  }

  /** Derived generator for a named sub-stream: independent of how much the parent was used. */
  static derive(seed: number, label: string): Rng {
    return new Rng(hash32(`${seed >>> 0}:${label}`));
  }

  next32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.next32() / 4294967296;
  }

  /** Integer in [lo, hi] inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.float() * (hi - lo + 1));
  }

  uniform(lo: number, hi: number): number {
    return lo + this.float() * (hi - lo);
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.float() * items.length)]!;
  }

  /** Standard normal via Box-Muller (deterministic: only uses float()). */
  normal(mean = 0, sd = 1): number {
    const u = 1 - this.float();
    const v = this.float();
    return mean + sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.float() * (i + 1));
      const tmp = items[i]!;
      items[i] = items[j]!;
      items[j] = tmp;
    }
    return items;
  }

  alnum(length: number): string {
    let out = "";
    for (let i = 0; i < length; i++) out += ALNUM[this.next32() % 62];
    return out;
  }

  digits(length: number): string {
    let out = "";
    for (let i = 0; i < length; i++) out += String(this.next32() % 10);
    return out;
  }
}
