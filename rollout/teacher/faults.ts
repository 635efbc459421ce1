// Injected faults (`--faults 429:0.05,500:0.02,reset:0.01`): one seeded draw per chat request.
import { z } from "zod";
import { Rng, UserError } from "../../env/util/index.ts";

export const FAULT_KINDS = ["429", "500", "reset", "slow", "empty", "nochoices", "truncated", "html", "badargs", "context"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
export type FaultRates = Partial<Record<FaultKind, number>>;

const Probability = z.number().min(0).max(1);
export const FaultRatesSchema = z
  .partialRecord(z.enum(FAULT_KINDS), Probability)
  .refine((r) => Object.values(r).reduce((s, p) => s + (p ?? 0), 0) <= 1, { message: "the fault probabilities add up to more than 1" });

export class FaultSpecError extends UserError {}

/** "429:0.05,500:0.02,reset:0.01" -> {429: 0.05, 500: 0.02, reset: 0.01}. */
export function parseFaults(spec: string): FaultRates {
  const rates: Record<string, number> = {};
  for (const part of spec.split(",").map((s) => s.trim()).filter(Boolean)) {
    const m = /^([^:\s]+):(.+)$/.exec(part);
    if (!m) throw new FaultSpecError(`"${part}" is not kind:probability (e.g. 429:0.05)`);
    const [, kind, p] = m as unknown as [string, string, string];
    if (!(FAULT_KINDS as readonly string[]).includes(kind)) throw new FaultSpecError(`unknown fault kind "${kind}"; known: ${FAULT_KINDS.join(", ")}`);
    const prob = Number(p);
    if (!Number.isFinite(prob) || prob < 0 || prob > 1) throw new FaultSpecError(`${kind}: probability must be a number in [0, 1] (got "${p}")`);
    if (kind in rates) throw new FaultSpecError(`${kind} is given twice`);
    rates[kind] = prob;
  }
  const checked = FaultRatesSchema.safeParse(rates);
  if (!checked.success) throw new FaultSpecError(checked.error.issues[0]!.message);
  return checked.data;
}

export class FaultPicker {
  private readonly rng: Rng;
  private readonly table: [FaultKind, number][];

  constructor(rates: FaultRates, seed: number) {
    this.rng = Rng.derive(seed, "faults");
    this.table = FAULT_KINDS.flatMap((k) => (rates[k] ? [[k, rates[k]] as [FaultKind, number]] : []));
  }

  next(): FaultKind | null {
    let u = this.rng.float();
    for (const [kind, p] of this.table) if ((u -= p) < 0) return kind;
    return null;
  }
}
