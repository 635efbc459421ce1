// Branch coverage by construction: every charted patient gets one scenario per task type, and the
// chart generator realises it. Assignment is greedy-balanced (the branch with the lowest
// count/weight among those compatible with the choices already made), ties broken by the seed.
import { Rng } from "../util/index.ts";

export const SCENARIO_SPACE = {
  // v1 task7: any GLU at all
  glu: { none: 0.08, some: 0.92 },
  // v1 task6: GLU within 24 h of the v1 clock
  glu24: { none: 0.4, some: 0.6 },
  // v1 task4/5 (and v2_task5): latest MG within 24 h of the v1 clock
  mg: { none: 0.25, high: 0.2, normal20: 0.1, eq19: 0.1, mild: 0.12, moderate: 0.12, severe: 0.11 },
  // v1 task9 (and v2_task9): latest K overall
  k: { none: 0.07, normal: 0.45, eq35: 0.1, low: 0.38 },
  // v1 task10 (and v2_task10): latest A1C overall
  a1c: { none: 0.15, old: 0.35, recent: 0.5 },
  // v2 task1: latest IMGCT0491/IMGIL0001
  ct: { none: 0.34, old: 0.33, recent: 0.33 },
  // v2 task5: C64.2 and latest CT (incl. 74177) within 90 days
  renal: { noC64: 0.4, noCT: 0.15, oldCT: 0.22, recentCT: 0.23 },
  // v2 task2: active anticoagulants
  anticoag: { none: 0.2, hep5k: 0.2, other1: 0.2, hep5kPlus: 0.2, multiNoHep: 0.2 },
  // v2 task3: HEARTRATE in the 6 h / 12 h windows before the v2 clock
  hr: { h6: 0.34, h12only: 0.33, none: 0.33 },
  // v2 task4: NUR1373 dwell vs the catheter clock
  cath: { none: 0.25, recent: 0.2, oldNoOrder: 0.22, oldWithOrder: 0.2, oldCompletedOrder: 0.13 },
  // v2 task6: thyroid protocol
  thyroid: { A: 0.25, B: 0.18, B1high: 0.1, noTsh: 0.14, normal: 0.13, lowFt4: 0.1, closeHighs: 0.1 },
  // v2 task7: latest QTc
  qtc: { none: 0.3, prolonged: 0.3, normal: 0.3, eq500: 0.1 },
  // v2 task8: active opioids / naloxone
  opioid: { none: 0.34, withNaloxone: 0.33, withoutNaloxone: 0.33 },
  // v2 task9: latest 90686
  flu: { none: 0.34, old: 0.33, recent: 0.33 },
  // v2 task10: COVIDVACCINE procedures / completed COVID-19 VAC medication requests
  covid: { none: 0.3, oldProc: 0.15, oldMed: 0.1, recentProc: 0.25, recentMed: 0.2 },
} as const;

type Space = typeof SCENARIO_SPACE;
export type Scenario = { [K in keyof Space]: keyof Space[K] & string };
export type ScenarioKey = keyof Scenario;

const ORDER = Object.keys(SCENARIO_SPACE) as ScenarioKey[];

function compatible(s: Partial<Scenario>, key: ScenarioKey, value: string): boolean {
  if (key === "glu24" && value === "some" && s.glu === "none") return false;
  if (key === "renal" && value === "noCT" && s.ct !== "none") return false;
  return true;
}

export class ScenarioPlanner {
  private readonly counts = new Map<string, number>();
  constructor(private readonly rng: Rng) {}

  next(): Scenario {
    const s: Partial<Scenario> = {};
    for (const key of ORDER) {
      const weights = SCENARIO_SPACE[key] as Record<string, number>;
      let best: string | undefined;
      let bestScore = Infinity;
      for (const value of this.rng.shuffle(Object.keys(weights))) {
        if (!compatible(s, key, value)) continue;
        const score = ((this.counts.get(`${key}.${value}`) ?? 0) + 0.5) / weights[value]!;
        if (score < bestScore) {
          bestScore = score;
          best = value;
        }
      }
      (s as Record<string, string>)[key] = best!;
      this.counts.set(`${key}.${best}`, (this.counts.get(`${key}.${best}`) ?? 0) + 1);
    }
    return s as Scenario;
  }
}
