// FHIR decimals keep their lexical form ("5.0" stays "5.0", as HAPI renders it).
// Producers that build resources as objects wrap such numbers in Decimal and
// serialize with stringifyCompact; the store keeps that text and renders from it.

export class Decimal {
  constructor(readonly raw: string) {
    if (!/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(raw)) throw new Error(`not a JSON number: ${raw}`);
  }
  toJSON(): number {
    return Number(this.raw);
  }
}

/** A decimal with a fixed number of fraction digits, e.g. decimal(5, 1) -> 5.0 */
export function decimal(value: number, fractionDigits: number): Decimal {
  return new Decimal(value.toFixed(fractionDigits));
}

/** JSON.stringify without whitespace, emitting Decimal values with their raw lexeme. */
export function stringifyCompact(value: unknown): string {
  if (value instanceof Decimal) return value.raw;
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : stringifyCompact(v))).join(",")}]`;
  const parts: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || typeof v === "function") continue;
    parts.push(`${JSON.stringify(k)}:${stringifyCompact(v)}`);
  }
  return `{${parts.join(",")}}`;
}
