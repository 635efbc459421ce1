// Seeded PRNGs and sampling helpers. Everything random that must repeat (the EHR generator, task
// generation, the stand-in teacher, rollout order) goes through this, so that the same seed gives
// byte-identical output on any machine.

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

/** The generators: sfc32 (the EHR generator, teacher, rollout order) and mulberry32 (task generation). */
export type RngAlgorithm = "sfc32" | "mulberry32";

export class Rng {
  /** The next uniform 32-bit unsigned integer. */
  readonly next32: () => number;

  constructor(seed: number | string, algorithm: RngAlgorithm = "sfc32") {
    const s = typeof seed === "number" ? seed >>> 0 : hash32(seed);
    this.next32 = algorithm === "sfc32" ? sfc32(s) : mulberry32Bits(s);
  }

  /** Derived sfc32 generator for a named sub-stream: independent of how much the parent was used. */
  static derive(seed: number, label: string): Rng {
    return new Rng(hash32(`${seed >>> 0}:${label}`));
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

function sfc32(seed: number): () => number {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed;
  const next = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 15; i++) next();
  return next;
}

function mulberry32Bits(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** A mulberry32 stream of uniform floats in [0, 1), for fixtures that want a plain function. */
export function mulberry32(seed: number): () => number {
  const rng = new Rng(seed, "mulberry32");
  return () => rng.float();
}
