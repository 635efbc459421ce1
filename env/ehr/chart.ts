// One patient's chart as plain records along a timeline (EHR.md "Timeline"): years of outpatient
// visits, past inpatient stays, and recent stays placed around the task clocks so that the
// patient's scenario (scenarios.ts) holds. render.ts turns the records into FHIR JSON text.
import {
  ANTICOAG_OTHER,
  BMP,
  CBC,
  CONDITIONS,
  DRUGS,
  LABS,
  LFT,
  LIPIDS,
  NALOXONE,
  OPIOIDS,
  ORDERS,
  PROCS,
  QT_DRUGS,
  VITALS,
  type ConditionDef,
  type ConditionKey,
  type DrugDef,
  type DrugKey,
  type LabDef,
  type OrderDef,
  type ProcDef,
} from "./catalog.ts";
import type { Demographics } from "./patients.ts";
import type { Rng } from "../util/index.ts";
import type { Scenario } from "./scenarios.ts";
import { CLOCK, DAY, HOUR, LATEST, MINUTE, at, toMinute } from "./time.ts";

/** Interpretation flag of a lab value. */
export const Flag = { None: 0, Low: 1, High: 2, NoneCoded: 3 } as const;
export type Flag = (typeof Flag)[keyof typeof Flag];

export interface ObsRec {
  code: string;
  vital: boolean;
  time: number;
  issued: number;
  /** JSON lexeme of the value: a number ("5.0") or, for BP, a JSON string. */
  lex: string;
  num: number;
  flag: Flag;
}
export interface CondRec {
  def: ConditionDef;
  onset: number;
  recorded: number;
  active: boolean;
  abated?: number;
}
export interface MedRec {
  drug: DrugDef;
  status: "active" | "stopped" | "completed";
  authored: number;
}
export interface ProcRec {
  def: ProcDef;
  time: number;
  /** When set, the procedure is charted with performedPeriod {start: time, end} instead of performedDateTime. */
  end?: number;
}
export interface OrderRec {
  def: OrderDef;
  status: "active" | "completed" | "revoked";
  priority: "routine" | "stat";
  authored: number;
  occurrence?: number;
  note?: string;
}

export interface Chart {
  obs: ObsRec[];
  conditions: CondRec[];
  meds: MedRec[];
  procedures: ProcRec[];
  orders: OrderRec[];
}

export interface ChartOptions {
  /** Inpatient days to aim for (scales the chart size). */
  inpatientDays: number;
  /** Extra instants around which to put dense inpatient data. */
  anchors?: number[];
}

interface Stay {
  admit: number;
  discharge: number;
  icu: boolean;
  /** Data runs up to the clock (patient still admitted). */
  ongoing: boolean;
}

const V1_WINDOW = CLOCK.v1 - DAY;
const HISTORY_END = at("2023-10-22T00:00:00Z");
const OLD_CUTOFF = at("2022-10-15T00:00:00Z");
const RECENT_FROM = at("2023-01-01T00:00:00Z");

function round(value: number, decimals: number): string {
  return value.toFixed(decimals);
}

export function generateChart(rng: Rng, demo: Demographics, sc: Scenario, opts: ChartOptions): Chart {
  return new ChartMaker(rng, demo, sc, opts).make();
}

class ChartMaker {
  private readonly obs: ObsRec[] = [];
  private readonly conditions: CondRec[] = [];
  private readonly meds: MedRec[] = [];
  private readonly procedures: ProcRec[] = [];
  private readonly orders: OrderRec[] = [];
  private readonly never = new Set<string>();
  private readonly baseline = new Map<string, number>();
  private readonly stays: Stay[] = [];
  private readonly visits: number[] = [];
  private readonly historyStart: number;
  private readonly birth: number;
  private readonly has = new Set<ConditionKey>();

  constructor(
    private readonly rng: Rng,
    private readonly demo: Demographics,
    private readonly sc: Scenario,
    private readonly opts: ChartOptions,
  ) {
    this.birth = at(`${demo.birthDate}T00:00:00Z`);
    this.historyStart = Math.max(at("2015-01-01T00:00:00Z") + rng.int(0, 900) * DAY, this.birth + 18 * 365 * DAY);
  }

  make(): Chart {
    this.pickConditions();
    this.planStays();
    this.planVisits();
    for (const stay of this.stays) this.inpatient(stay);
    for (const visit of this.visits) this.outpatient(visit);
    this.ensureWindowLabs();
    this.applyLabScenarios();
    this.a1c();
    this.thyroid();
    this.qtc();
    this.conditionRecords();
    this.medications();
    this.proceduresAndOrders();
    return { obs: this.obs, conditions: this.conditions, meds: this.meds, procedures: this.procedures, orders: this.orders };
  }

  // ---- problems ----------------------------------------------------------------------------

  private pickConditions(): void {
    const { rng, sc, has } = this;
    const add = (k: ConditionKey, p: number) => {
      if (rng.chance(p)) has.add(k);
    };
    if (sc.glu !== "none") add("diabetes", 0.42);
    add("hypertension", 0.6);
    add("hyperlipidemia", 0.45);
    add("ckd", 0.2);
    add("cad", 0.2);
    add("heartFailure", 0.12);
    add("copd", 0.14);
    add("obesity", 0.28);
    add("gerd", 0.25);
    add("depression", 0.18);
    add("osteoarthritis", 0.2);
    add("sleepApnea", 0.1);
    if (this.demo.gender === "male") add("bph", 0.25);
    if (sc.anticoag === "other1" || sc.anticoag === "multiNoHep" || sc.anticoag === "hep5kPlus") add("afib", 0.6);
    if (sc.thyroid === "normal") add("hypothyroid", 0.5);
    if (sc.renal !== "noC64") has.add("renalMassLeft");
    else add("renalMassRight", 0.04);
    if (sc.opioid !== "none") add("chronicPain", 0.5);
    if (sc.qtc === "prolonged") add("longQt", 0.3);
    if (sc.cath !== "none") add("urinaryRetention", 0.5);
    if (sc.k === "low") add("hypokalemia", 0.5);
    if (sc.mg === "severe" || sc.mg === "moderate") add("hypomagnesemia", 0.5);
  }

  // ---- timeline ----------------------------------------------------------------------------

  private stay(admit: number, discharge: number, ongoing = false): void {
    admit = toMinute(admit);
    discharge = toMinute(Math.min(discharge, LATEST - 5 * MINUTE));
    if (discharge <= admit + 2 * HOUR) return;
    this.stays.push({ admit, discharge, icu: this.rng.chance(0.3), ongoing });
  }

  private planStays(): void {
    const { rng, sc } = this;
    const v2 = CLOCK.v2;
    const inWindow = sc.mg !== "none" || sc.glu24 === "some" || rng.chance(0.3);
    const now = LATEST - rng.int(5, 50) * MINUTE;
    const d = (s: string) => at(s);
    if (sc.hr === "h6") {
      const admit = v2 - rng.uniform(1.5, 5) * DAY;
      if (inWindow) this.stay(admit, now, true);
      else this.stay(admit, d("2023-11-08T10:00:00Z") + rng.uniform(0, 3.2) * DAY);
    } else if (sc.hr === "h12only") {
      this.stay(v2 - rng.uniform(2, 6) * DAY, d("2023-11-07T11:30:00Z") + rng.int(0, 270) * MINUTE);
      if (inWindow) this.stay(d("2023-11-10T00:00:00Z") + rng.uniform(0, 2.2) * DAY, now, true);
    } else if (inWindow) {
      this.stay(d("2023-11-08T06:00:00Z") + rng.uniform(0, 4) * DAY, now, true);
    } else {
      const r = rng.float();
      if (r < 0.35) this.stay(d("2023-10-27T00:00:00Z") + rng.uniform(0, 4) * DAY, d("2023-11-03T00:00:00Z") + rng.uniform(0, 3.8) * DAY);
      else if (r < 0.7) this.stay(d("2023-11-08T06:00:00Z") + rng.uniform(0, 1.2) * DAY, d("2023-11-10T00:00:00Z") + rng.uniform(0, 1.8) * DAY);
    }
    const recentDays = this.stays.reduce((s, st) => s + (st.discharge - st.admit) / DAY, 0);
    this.pastStays(Math.max(0, this.opts.inpatientDays - recentDays));
    for (const a of this.opts.anchors ?? []) this.anchorStay(Math.min(a, LATEST));
    this.stays.sort((a, b) => a.admit - b.admit);
  }

  private pastStays(days: number): void {
    const { rng } = this;
    const lengths: number[] = [];
    let sum = 0;
    while (sum < days) {
      const len = Math.min(28, 2 + -Math.log(1 - rng.float()) * 7);
      lengths.push(len);
      sum += len;
    }
    const start = this.historyStart + 45 * DAY;
    const span = (HISTORY_END - start) / DAY;
    const minGap = 4;
    while (lengths.length && sum + lengths.length * minGap > span) sum -= lengths.pop()!;
    const free = span - sum - lengths.length * minGap;
    const cuts = lengths.map(() => rng.uniform(0, free)).sort((a, b) => a - b);
    let used = 0;
    for (let i = 0; i < lengths.length; i++) {
      const admit = start + (cuts[i]! + used + i * minGap) * DAY + rng.int(0, 23) * HOUR;
      this.stay(admit, admit + lengths[i]! * DAY);
      used += lengths[i]!;
    }
  }

  private anchorStay(a: number): void {
    if (this.stays.some((s) => s.admit <= a && a <= s.discharge)) return;
    const admit = a - this.rng.uniform(1, 4) * DAY;
    const discharge = a + this.rng.uniform(2 / 24, 2) * DAY;
    // Drop what the anchor stay overlaps, then add it.
    for (let i = this.stays.length - 1; i >= 0; i--) {
      const s = this.stays[i]!;
      if (s.admit < discharge && admit < s.discharge) this.stays.splice(i, 1);
    }
    this.stay(admit, discharge, discharge >= LATEST - 5 * MINUTE);
  }

  private inStay(t: number, marginDays = 0): boolean {
    const m = marginDays * DAY;
    return this.stays.some((s) => s.admit - m <= t && t <= s.discharge + m);
  }

  private planVisits(): void {
    const { rng } = this;
    let t = this.historyStart;
    while (true) {
      t += rng.int(30, 180) * DAY;
      if (t > HISTORY_END) break;
      const visit = toMinute(Math.floor(t / DAY) * DAY + rng.int(16 * 60, 23 * 60 + 30) * MINUTE);
      if (this.inStay(visit, 2)) continue;
      this.visits.push(visit);
    }
  }

  // ---- observations ------------------------------------------------------------------------

  private base(code: string, def: LabDef): number {
    let b = this.baseline.get(code);
    if (b === undefined) {
      const shifts: Record<string, number> = this.has.has("ckd") ? { CREAT: 0.9, BUN: 16, K: 0.35, PHOS: 0.8, HGB: -1.6, HCT: -5 } : {};
      if (this.has.has("diabetes")) shifts.GLU = 45;
      if (this.demo.gender === "male") {
        shifts.HGB = (shifts.HGB ?? 0) + 1.2;
        shifts.HCT = (shifts.HCT ?? 0) + 3.5;
      }
      b = def.mean + (shifts[code] ?? 0) + def.sd * 0.6 * this.rng.normal();
      this.baseline.set(code, b);
    }
    return b;
  }

  private labValue(code: string): number {
    const def = LABS[code]!;
    const v = this.base(code, def) + def.sd * 0.8 * this.rng.normal();
    return Math.min(def.max, Math.max(def.min, v));
  }

  /** Adds a lab result unless the scenario forbids that code (at that time). */
  lab(code: string, time: number, value?: number, force = false): ObsRec | undefined {
    if (time > LATEST) return undefined;
    if (!force) {
      if (this.never.has(code)) return undefined;
      if (time >= V1_WINDOW && ((code === "MG" && this.sc.mg === "none") || (code === "GLU" && this.sc.glu24 === "none"))) return undefined;
      if (code === "GLU" && this.sc.glu === "none") return undefined;
      if (code === "K" && this.sc.k === "none") return undefined;
    }
    const def = LABS[code]!;
    const num = Number(round(value ?? this.labValue(code), def.decimals));
    const delay = this.rng.chance(0.03) ? this.rng.int(1, 6) * DAY : this.rng.int(8, 240) * MINUTE;
    const rec: ObsRec = { code, vital: false, time, issued: Math.min(time + delay, LATEST), lex: round(num, def.decimals), num, flag: Flag.None };
    this.setFlag(rec);
    this.obs.push(rec);
    return rec;
  }

  setValue(rec: ObsRec, value: number): void {
    const def = LABS[rec.code]!;
    rec.num = Number(round(value, def.decimals));
    rec.lex = round(rec.num, def.decimals);
    this.setFlag(rec);
  }

  private setFlag(rec: ObsRec): void {
    const def = LABS[rec.code]!;
    rec.flag = rec.num < def.low ? Flag.Low : rec.num > def.high ? Flag.High : this.rng.chance(0.01) ? Flag.NoneCoded : Flag.None;
  }

  private vital(code: string, time: number, lex: string, num: number): void {
    if (time > LATEST) return;
    this.obs.push({ code, vital: true, time, issued: Math.min(time + this.rng.int(0, 12) * MINUTE, LATEST), lex, num, flag: Flag.None });
  }

  private vitalBase(code: string, mean: number, sd: number): number {
    let b = this.baseline.get(`v:${code}`);
    if (b === undefined) {
      b = mean + sd * this.rng.normal();
      this.baseline.set(`v:${code}`, b);
    }
    return b;
  }

  private vitalsSet(t: number, outpatient: boolean): void {
    const { rng } = this;
    const sys = Math.round(Math.min(210, Math.max(78, this.vitalBase("SYS", 128, 12) + 11 * rng.normal())));
    const dia = Math.round(Math.min(120, Math.max(38, this.vitalBase("DIA", 76, 7) + 8 * rng.normal())));
    this.vital("BP", t, `"${sys}/${dia} mmHg"`, sys);
    const hr = Math.round(Math.min(170, Math.max(38, this.vitalBase("HR", 80, 9) + 9 * rng.normal())));
    this.vital("HEARTRATE", t, String(hr), hr);
    const temp = Math.min(103.5, Math.max(95.5, 98.3 + 0.5 * rng.normal() + (rng.chance(0.03) ? 2 : 0)));
    this.vital("TEMP", t, round(temp, 1), temp);
    const resp = Math.round(Math.min(36, Math.max(10, 16 + 2.2 * rng.normal())));
    this.vital("RESP", t, String(resp), resp);
    const spo2 = Math.round(Math.min(100, Math.max(84, this.vitalBase("SPO2", 96.5, 1.2) + 1.5 * rng.normal())));
    this.vital("SPO2", t, String(spo2), spo2);
    if (!outpatient || rng.chance(0.5)) {
      const pain = rng.chance(0.55) ? 0 : rng.int(1, 9);
      this.vital("PAIN", t, String(pain), pain);
    }
  }

  private weight(t: number): void {
    const w = Math.max(38, this.vitalBase("WEIGHT", this.demo.gender === "male" ? 86 : 72, 14) + 1.2 * this.rng.normal());
    this.vital("WEIGHT", t, round(w, 1), w);
  }

  private height(t: number): void {
    const h = this.vitalBase("HEIGHT", this.demo.gender === "male" ? 176 : 162, 7) + 0.4 * this.rng.normal();
    this.vital("HEIGHT", t, round(h, 1), h);
  }

  private panel(codes: readonly string[], t: number): void {
    for (const c of codes) this.lab(c, t);
  }

  private morningLabs(t: number, first: boolean): void {
    const { rng } = this;
    this.panel(BMP, t);
    if (first || rng.chance(0.8)) this.lab("MG", t);
    if (first || rng.chance(0.6)) this.lab("PHOS", t);
    if (first || rng.chance(0.85)) this.panel(CBC, t);
    if (rng.chance(0.25)) this.panel(LFT, t);
    if (first || rng.chance(0.2)) this.lab("INR", t);
    if (rng.chance(0.15)) {
      const later = t + rng.int(5, 9) * HOUR;
      this.lab("K", later);
      if (rng.chance(0.6)) this.lab("MG", later);
    }
  }

  private inpatient(stay: Stay): void {
    const { rng } = this;
    const baseInterval = stay.icu ? rng.uniform(1, 1.6) : rng.pick([2, 3, 4]);
    this.height(stay.admit + rng.int(10, 50) * MINUTE);
    this.weight(stay.admit + rng.int(10, 50) * MINUTE);
    let t = stay.admit + rng.int(5, 30) * MINUTE;
    let last = t;
    while (t <= stay.discharge) {
      this.vitalsSet(t, false);
      last = t;
      t = toMinute(t + Math.min(4 * HOUR, Math.max(40 * MINUTE, baseInterval * HOUR + rng.int(-25, 25) * MINUTE)));
    }
    const final = stay.discharge - rng.int(5, 20) * MINUTE;
    if (!stay.ongoing && final > last + 40 * MINUTE) this.vitalsSet(final, false);
    // Admission labs, then morning draws (02:20-06:30 Pacific = 10:20-14:30 UTC).
    this.morningLabs(toMinute(stay.admit + rng.int(30, 120) * MINUTE), true);
    for (let day = Math.floor(stay.admit / DAY) * DAY + DAY; day <= stay.discharge; day += DAY) {
      const draw = day + rng.int(10 * 60 + 20, 14 * 60 + 30) * MINUTE;
      if (draw > stay.admit + 3 * HOUR && draw <= stay.discharge) this.morningLabs(draw, false);
      const w = day + rng.int(13 * 60, 15 * 60) * MINUTE;
      if (w > stay.admit + 6 * HOUR && w <= stay.discharge) this.weight(w);
    }
    if (this.has.has("diabetes")) {
      // Point-of-care glucose before meals and at bedtime (Pacific 07:30, 11:30, 16:30, 21:00).
      for (let day = Math.floor(stay.admit / DAY) * DAY - DAY; day <= stay.discharge; day += DAY) {
        for (const m of [15 * 60 + 30, 19 * 60 + 30, 24 * 60 + 30, 29 * 60]) {
          const c = day + (m + rng.int(-35, 35)) * MINUTE;
          if (c > stay.admit && c <= stay.discharge) this.lab("GLU", c, Math.max(45, this.labValue("GLU") + 25 * rng.normal()));
        }
      }
    }
  }

  private outpatient(t: number): void {
    const { rng } = this;
    this.vitalsSet(t, true);
    this.weight(t);
    if (rng.chance(0.3)) this.height(t);
    if (rng.chance(0.65)) {
      const draw = t + rng.int(20, 90) * MINUTE;
      this.panel(BMP, draw);
      if (rng.chance(0.55)) this.panel(CBC, draw);
      if (rng.chance(0.3)) this.lab("MG", draw);
      if (rng.chance(0.3)) this.panel(LIPIDS, draw);
      if (rng.chance(0.3)) this.panel(LFT, draw);
    }
  }

  /** Labs the scenario needs inside the v1 24 h window exist even if the stay's draws missed it. */
  private ensureWindowLabs(): void {
    const { rng, sc } = this;
    const windowStay = this.stays.find((s) => s.discharge >= V1_WINDOW + HOUR);
    const pickTime = () => {
      const from = Math.max(V1_WINDOW + 30 * MINUTE, windowStay ? windowStay.admit + 30 * MINUTE : 0);
      return toMinute(rng.uniform(from, LATEST - 20 * MINUTE));
    };
    if (sc.mg !== "none" && !this.obs.some((o) => o.code === "MG" && o.time >= V1_WINDOW)) this.lab("MG", pickTime());
    if (sc.glu24 === "some" && !this.obs.some((o) => o.code === "GLU" && o.time >= V1_WINDOW)) this.lab("GLU", pickTime());
    if (sc.glu === "some" && !this.obs.some((o) => o.code === "GLU")) this.lab("GLU", this.visits.at(-1) ?? HISTORY_END);
    if (sc.k !== "none" && !this.obs.some((o) => o.code === "K")) this.lab("K", this.visits.at(-1) ?? HISTORY_END);
  }

  private latest(code: string, from = -Infinity): ObsRec | undefined {
    let best: ObsRec | undefined;
    for (const o of this.obs) if (o.code === code && o.time >= from && (!best || o.time > best.time)) best = o;
    return best;
  }

  private applyLabScenarios(): void {
    const { rng, sc } = this;
    const mg = this.latest("MG", V1_WINDOW);
    if (mg) {
      const v: Record<string, () => number> = {
        none: () => mg.num,
        high: () => rng.pick([2.1, 2.2, 2.3, 2.4, 2.6]),
        normal20: () => 2.0,
        eq19: () => 1.9,
        mild: () => rng.pick([1.5, 1.6, 1.7, 1.8]),
        moderate: () => rng.pick([1.0, 1.1, 1.2, 1.3, 1.4]),
        severe: () => rng.pick([0.7, 0.8, 0.9]),
      };
      this.setValue(mg, v[sc.mg]!());
    }
    const k = this.latest("K");
    if (k) {
      if (sc.k === "low") this.setValue(k, rng.pick([2.6, 2.8, 2.9, 3.0, 3.1, 3.2, 3.3, 3.4]));
      else if (sc.k === "eq35") this.setValue(k, 3.5);
      else if (sc.k === "normal") this.setValue(k, rng.pick([3.6, 3.8, 3.9, 4.0, 4.1, 4.3, 4.4, 4.6, 4.8]));
    }
  }

  /** Outpatient (or inpatient) instants inside [from, to], or a random instant there. */
  private momentsIn(from: number, to: number, count: number): number[] {
    const inRange = this.visits.filter((v) => v >= from && v <= to);
    const out = this.rng.shuffle(inRange).slice(0, count);
    while (out.length < count) out.push(toMinute(this.rng.uniform(from, to)));
    return out.sort((a, b) => a - b);
  }

  private a1c(): void {
    const { rng, sc } = this;
    if (sc.a1c === "none") return;
    const diabetic = this.has.has("diabetes");
    const mean = diabetic ? 7.3 : 5.4;
    const sd = diabetic ? 1.1 : 0.3;
    let times = this.visits.filter((_, i) => (diabetic ? i % 2 === 0 : rng.chance(0.18)));
    if (sc.a1c === "old") {
      times = times.filter((t) => t <= OLD_CUTOFF);
      if (!times.length) times = this.momentsIn(at("2018-01-01T00:00:00Z"), OLD_CUTOFF, 1);
    } else if (!times.some((t) => t >= RECENT_FROM)) {
      times.push(...this.momentsIn(RECENT_FROM, at("2023-11-05T00:00:00Z"), 1));
    }
    for (const t of times) this.lab("A1C", t + rng.int(10, 60) * MINUTE, Math.max(4.2, mean + sd * rng.normal()), true);
  }

  private tshPair(t: number, tsh: number, ft4: number): void {
    this.lab("TSH", t, tsh, true);
    this.lab("FT4", t, ft4, true);
  }

  private thyroid(): void {
    const { rng, sc } = this;
    if (sc.thyroid === "noTsh") return;
    const normalTsh = () => rng.uniform(0.6, 4.2);
    const normalFt4 = () => rng.uniform(0.9, 1.6);
    const history = this.momentsIn(this.historyStart, at("2022-12-31T00:00:00Z"), rng.int(1, 4));
    for (const t of history) this.tshPair(t, normalTsh(), normalFt4());
    const lateFrom = at("2023-02-01T00:00:00Z");
    const lateTo = at("2023-11-05T00:00:00Z");
    switch (sc.thyroid) {
      case "A": {
        const first = toMinute(rng.uniform(lateFrom, at("2023-08-15T00:00:00Z")));
        const second = toMinute(first + rng.uniform(40, 80) * DAY);
        this.tshPair(first, rng.uniform(10.6, 24), rng.uniform(0.55, 0.95));
        this.tshPair(Math.min(second, lateTo), rng.uniform(10.6, 28), rng.uniform(0.5, 0.9));
        break;
      }
      case "B1high":
      case "B": {
        if (sc.thyroid === "B1high") this.tshPair(toMinute(rng.uniform(at("2022-06-01T00:00:00Z"), at("2022-12-15T00:00:00Z"))), rng.uniform(10.8, 16), rng.uniform(0.85, 1.1));
        const tsh = rng.chance(0.12) ? rng.pick([4.5, 10]) : rng.uniform(4.7, 9.6);
        this.tshPair(toMinute(rng.uniform(lateFrom, lateTo)), tsh, rng.uniform(0.85, 1.6));
        break;
      }
      case "lowFt4":
        this.tshPair(toMinute(rng.uniform(lateFrom, lateTo)), rng.uniform(4.8, 9.5), rng.uniform(0.45, 0.75));
        break;
      case "closeHighs": {
        const first = toMinute(rng.uniform(lateFrom, at("2023-10-01T00:00:00Z")));
        this.tshPair(first, rng.uniform(10.6, 18), rng.uniform(0.6, 0.9));
        this.tshPair(toMinute(first + rng.uniform(8, 20) * DAY), rng.uniform(10.6, 18), rng.uniform(0.6, 0.9));
        break;
      }
      case "normal":
        this.tshPair(toMinute(rng.uniform(lateFrom, lateTo)), normalTsh(), normalFt4());
        break;
    }
  }

  private qtc(): void {
    const { rng, sc } = this;
    if (sc.qtc === "none") return;
    const history = this.momentsIn(this.historyStart, at("2023-06-30T00:00:00Z"), rng.int(1, 4));
    for (const t of history) this.lab("QTCINTERVAL", t, rng.uniform(405, 468), true);
    if (sc.qtc === "normal" && rng.chance(0.3)) this.lab("QTCINTERVAL", toMinute(rng.uniform(at("2023-07-01T00:00:00Z"), at("2023-09-30T00:00:00Z"))), rng.uniform(505, 530), true);
    const latest = toMinute(rng.uniform(at("2023-10-05T00:00:00Z"), CLOCK.v2 - 6 * HOUR));
    const value = sc.qtc === "prolonged" ? rng.uniform(506, 565) : sc.qtc === "eq500" ? 500 : rng.uniform(415, 492);
    this.lab("QTCINTERVAL", latest, value, true);
  }

  // ---- conditions --------------------------------------------------------------------------

  private conditionRecords(): void {
    const { rng } = this;
    for (const key of this.has) {
      const def = CONDITIONS[key];
      const onset = toMinute(rng.uniform(this.historyStart - 5 * 365 * DAY, at("2023-06-01T00:00:00Z")));
      const recorded = Math.max(onset, this.historyStart) + rng.int(0, 30) * DAY;
      this.conditions.push({ def, onset: Math.max(onset, this.birth + 10 * 365 * DAY), recorded: Math.min(recorded, at("2023-10-01T00:00:00Z")), active: true });
    }
    // Resolved acute problems from past stays.
    for (const stay of this.stays) {
      if (!rng.chance(0.45)) continue;
      const key = rng.pick<ConditionKey>(["uti", "pneumonia", "sepsis", "aki", "hypokalemia", "hypomagnesemia", "dvt"]);
      const resolved = stay.discharge + rng.int(7, 60) * DAY;
      this.conditions.push({ def: CONDITIONS[key], onset: stay.admit, recorded: stay.admit + rng.int(1, 20) * HOUR, active: resolved > LATEST, abated: resolved > LATEST ? undefined : resolved });
    }
  }

  // ---- medications -------------------------------------------------------------------------

  private med(key: DrugKey, status: MedRec["status"], authored: number): void {
    this.meds.push({ drug: DRUGS[key], status, authored: Math.min(toMinute(authored), LATEST) });
  }

  private medications(): void {
    const { rng, sc, has } = this;
    const current = this.stays.at(-1);
    const admitted = current && current.discharge >= at("2023-11-01T00:00:00Z") ? current : undefined;
    const activeAt = () => (admitted ? admitted.admit + rng.int(20, 600) * MINUTE : toMinute(rng.uniform(at("2023-03-01T00:00:00Z"), at("2023-10-30T00:00:00Z"))));

    // Chronic outpatient medications.
    const chronic = (key: DrugKey, cond: boolean) => {
      if (!cond) return;
      const start = toMinute(rng.uniform(this.historyStart, at("2021-01-01T00:00:00Z")));
      if (rng.chance(0.3)) this.med(key, "stopped", start);
      this.med(key, rng.chance(0.9) ? "active" : "stopped", start + rng.int(100, 700) * DAY);
    };
    chronic("metformin", has.has("diabetes"));
    chronic("insulinGlargine", has.has("diabetes") && rng.chance(0.4));
    chronic("lisinopril", has.has("hypertension") && rng.chance(0.7));
    chronic("amlodipine", has.has("hypertension") && rng.chance(0.5));
    chronic("atorvastatin", has.has("hyperlipidemia") || has.has("cad"));
    chronic("metoprolol", has.has("cad") || has.has("afib"));
    chronic("furosemide", has.has("heartFailure"));
    chronic("pantoprazole", has.has("gerd"));
    chronic("tamsulosin", has.has("bph"));
    chronic("sertraline", has.has("depression"));
    if (has.has("hypothyroid") && sc.thyroid === "normal") chronic("levothyroxine", true);

    // Orders of past stays, all finished.
    for (const stay of this.stays) {
      if (stay === admitted) continue;
      const done = (): MedRec["status"] => (rng.chance(0.75) ? "completed" : "stopped");
      const t = () => stay.admit + rng.int(20, 360) * MINUTE;
      this.med(rng.chance(0.6) ? "heparin5k" : "enoxaparin", done(), t());
      this.med("acetaminophen", done(), t());
      if (rng.chance(0.5)) this.med(rng.pick(["ondansetronInj", "ondansetronOdt"]), done(), t());
      if (rng.chance(0.4)) this.med(rng.pick(OPIOIDS), done(), t());
      if (rng.chance(0.4)) this.med("pantoprazole", done(), t());
      if (rng.chance(0.3)) this.med("docusate", done(), t());
      if (rng.chance(0.25)) this.med("ceftriaxone", done(), t());
      if (rng.chance(0.15)) this.med("potassiumChloride", "completed", t());
      if (rng.chance(0.12)) this.med("magnesiumSulfate", "completed", t());
      if (has.has("diabetes")) this.med("insulinLispro", done(), t());
    }

    // Current orders the scenario is about.
    const anticoagStart = activeAt();
    switch (sc.anticoag) {
      case "hep5k":
        this.med(rng.chance(0.7) ? "heparin5k" : "heparin5kB", "active", anticoagStart);
        break;
      case "other1":
        this.med(rng.pick(ANTICOAG_OTHER), "active", anticoagStart);
        break;
      case "hep5kPlus": {
        const others = rng.shuffle([...ANTICOAG_OTHER]).slice(0, rng.chance(0.25) ? 2 : 1);
        this.med("heparin5k", "active", anticoagStart);
        for (const o of others) this.med(o, "active", anticoagStart + rng.int(1, 72) * HOUR);
        break;
      }
      case "multiNoHep": {
        const [a, b] = rng.shuffle([...ANTICOAG_OTHER]);
        this.med(a!, "active", anticoagStart);
        this.med(b!, "active", anticoagStart + rng.int(1, 72) * HOUR);
        break;
      }
      case "none":
        if (rng.chance(0.4)) this.med(rng.pick(["heparin5k", "apixaban", "enoxaparin"] as DrugKey[]), "stopped", anticoagStart);
        break;
    }
    if (sc.opioid !== "none") {
      const n = rng.chance(0.3) ? 2 : 1;
      for (const o of rng.shuffle([...OPIOIDS]).slice(0, n)) this.med(o, "active", activeAt());
      if (sc.opioid === "withNaloxone") this.med(rng.pick(NALOXONE), "active", activeAt());
      else if (rng.chance(0.3)) this.med(rng.pick(NALOXONE), "stopped", activeAt());
    } else if (rng.chance(0.3)) {
      this.med(rng.pick(OPIOIDS), "stopped", activeAt());
    }
    if (sc.qtc !== "none" || rng.chance(0.3)) {
      const n = rng.chance(0.35) ? 2 : 1;
      for (const q of rng.shuffle([...QT_DRUGS]).slice(0, n)) this.med(q, "active", activeAt());
    }
    if (admitted) {
      this.med("acetaminophen", "active", activeAt());
      if (rng.chance(0.5)) this.med("pantoprazole", "active", activeAt());
      if (has.has("diabetes")) this.med("insulinLispro", "active", activeAt());
    }

    // COVID-19 vaccines recorded as completed medication orders.
    const old = () => toMinute(rng.uniform(at("2021-01-15T00:00:00Z"), at("2022-10-15T00:00:00Z")));
    const recent = () => toMinute(rng.uniform(at("2022-12-01T00:00:00Z"), at("2023-11-01T00:00:00Z")));
    const covidMed = (t: number) => this.med(rng.chance(0.6) ? "covidPfizer" : "covidModerna", "completed", t);
    if (sc.covid === "oldMed") for (let i = rng.int(1, 3); i > 0; i--) covidMed(old());
    if (sc.covid === "recentMed") covidMed(recent());
    if (sc.covid === "oldProc" || sc.covid === "recentProc" || sc.covid === "recentMed") {
      for (let i = rng.int(1, 3); i > 0; i--) this.proc("covid", old());
    }
    if (sc.covid === "recentProc") this.proc("covid", recent());
  }

  // ---- procedures and orders ---------------------------------------------------------------

  private proc(key: keyof typeof PROCS, time: number): void {
    this.procedures.push({ def: PROCS[key], time: Math.min(toMinute(time), LATEST) });
  }

  private proceduresAndOrders(): void {
    const { rng, sc } = this;
    const range = (from: string, to: string) => toMinute(rng.uniform(at(from), at(to)));
    const imgCt = () => (rng.chance(0.7) ? "ctAbdContrast" : "ctAbdOutside");
    // v2 task1 (IMGCT0491/IMGIL0001, 365 days) and task5 (plus 74177, 90 days) together.
    if (sc.ct === "old") for (let i = rng.int(1, 3); i > 0; i--) this.proc(imgCt(), range("2016-06-01T00:00:00Z", "2022-09-15T00:00:00Z"));
    if (sc.ct === "recent") {
      if (sc.renal === "oldCT") this.proc(imgCt(), range("2022-12-15T00:00:00Z", "2023-07-15T00:00:00Z"));
      else this.proc(imgCt(), range("2022-12-15T00:00:00Z", "2023-11-03T00:00:00Z"));
      if (rng.chance(0.5)) this.proc(imgCt(), range("2017-01-01T00:00:00Z", "2022-06-01T00:00:00Z"));
    }
    if (sc.renal === "recentCT") this.proc(rng.chance(0.5) || sc.ct !== "recent" ? "ct74177" : imgCt(), range("2023-08-20T00:00:00Z", "2023-11-04T00:00:00Z"));
    if (sc.renal === "oldCT" && (sc.ct === "none" || rng.chance(0.5))) this.proc("ct74177", range("2019-01-01T00:00:00Z", "2023-07-15T00:00:00Z"));
    if (sc.renal === "noC64" && rng.chance(0.2)) this.proc("ct74177", range("2016-01-01T00:00:00Z", "2023-10-01T00:00:00Z"));
    if (rng.chance(0.2)) this.proc("ct74176", range("2016-01-01T00:00:00Z", "2023-10-15T00:00:00Z"));
    if (sc.renal !== "noC64") {
      this.proc("renalUs", range("2018-01-01T00:00:00Z", "2023-06-01T00:00:00Z"));
      if (rng.chance(0.5)) this.order("nephrologyReferral", rng.chance(0.5) ? "completed" : "active", range("2019-01-01T00:00:00Z", "2023-09-01T00:00:00Z"));
    }

    // v2 task4: urinary catheters against the catheter clock (2023-11-11T09:00).
    const cathClock = CLOCK.v2Catheter;
    if (sc.cath !== "none") {
      for (const stay of this.stays) if (stay.discharge < at("2023-06-01T00:00:00Z") && rng.chance(0.25)) this.proc("catheter", stay.admit + rng.int(1, 12) * HOUR);
    }
    if (sc.cath === "recent") this.proc("catheter", cathClock - rng.int(6, 44) * HOUR);
    if (sc.cath.startsWith("old")) {
      const placed = cathClock - rng.uniform(3, 14) * DAY;
      this.proc("catheter", placed);
      if (sc.cath === "oldWithOrder") this.order("catheterRemoval", "active", placed + rng.uniform(2.1, 2.9) * DAY);
      if (sc.cath === "oldCompletedOrder") this.order("catheterRemoval", rng.chance(0.7) ? "completed" : "revoked", placed + rng.uniform(2.1, 2.9) * DAY);
    }

    // v2 task9: influenza vaccine (clock 2024-01-09).
    if (sc.flu !== "none") {
      const lastSeason = sc.flu === "recent" ? 2023 : rng.int(2019, 2022);
      const first = Math.max(2016, lastSeason - rng.int(0, 5));
      for (let y = first; y <= lastSeason; y++) {
        if (y !== lastSeason && rng.chance(0.35)) continue;
        const t = range(`${y}-09-15T00:00:00Z`, y === 2022 ? "2022-11-30T00:00:00Z" : y === 2023 ? "2023-11-05T00:00:00Z" : `${y}-12-15T00:00:00Z`);
        this.proc("flu", t);
      }
    }

    // Everyday procedures.
    for (const stay of this.stays) {
      const t = () => stay.admit + rng.int(1, 40) * HOUR;
      if (rng.chance(0.6)) this.proc(rng.chance(0.5) ? "cxr" : "cxr1", Math.min(t(), stay.discharge));
      if (rng.chance(0.4)) this.proc("ecg", Math.min(t(), stay.discharge));
      if (rng.chance(0.12)) this.proc("echo", Math.min(t(), stay.discharge));
      if (stay.icu && rng.chance(0.3)) {
        const start = Math.min(t(), stay.discharge - HOUR);
        this.procedures.push({ def: PROCS.centralLine, time: toMinute(start), end: toMinute(start + rng.int(20, 75) * MINUTE) });
      }
    }
    if (rng.chance(0.3)) this.proc("colonoscopy", range("2015-06-01T00:00:00Z", "2023-09-01T00:00:00Z"));
    if (rng.chance(0.1)) this.proc("egd", range("2015-06-01T00:00:00Z", "2023-09-01T00:00:00Z"));
    if (rng.chance(0.3)) this.proc("pneumovax", range("2016-01-01T00:00:00Z", "2023-09-01T00:00:00Z"));

    // Referrals and lab orders.
    for (let i = rng.int(0, 3); i > 0; i--) {
      const key = rng.pick(["cardiologyReferral", "endocrinologyReferral", "ptReferral", "bmpOrder", "cbcOrder"] as const);
      this.order(key, rng.chance(0.75) ? "completed" : "active", range("2017-01-01T00:00:00Z", "2023-10-20T00:00:00Z"));
    }
  }

  private order(key: keyof typeof ORDERS, status: OrderRec["status"], authored: number): void {
    const a = Math.min(toMinute(authored), LATEST);
    this.orders.push({ def: ORDERS[key], status, priority: this.rng.chance(0.2) ? "stat" : "routine", authored: a, occurrence: Math.min(a + this.rng.int(1, 48) * HOUR, LATEST) });
  }
}

export { V1_WINDOW };
