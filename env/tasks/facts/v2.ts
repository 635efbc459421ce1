// The data computations of the mab-v2 graders (one implementation shared by graders and branches).
import type { FhirReader } from "../../fhir/index.ts";
import {
  at,
  dateDiffDays,
  DAY_US,
  dtCmp,
  dtDiffUs,
  fromIsoformat,
  ge,
  getItem,
  gt,
  HOUR_US,
  intToFloat,
  le,
  type Py,
  type PyDatetime,
  PyDict,
  PyError,
  pyGet,
  pyIn,
  pyLower,
  tdDays,
  truthy,
  typeName,
} from "../../python/index.ts";
import { baseFact, beforeCutoff, fetchResources, parseTime, performedTime } from "./base.ts";

export const CT_CODES = ["IMGCT0491", "IMGIL0001"];
export const ANTICOAGULANTS = ["heparin", "enoxaparin", "dalteparin", "fondaparinux", "apixaban", "rivaroxaban", "dabigatran", "warfarin"];
export const OPIOIDS = ["hydromorphone", "oxycodone", "fentanyl", "hydrocodone", "morphine"];
export const QT_DRUGS = ["ondansetron", "prochlorperazine", "haloperidol", "quetiapine", "olanzapine", "risperidone", "ziprasidone", "clozapine", "chlorpromazine"];
export const NON_ACTIVE = ["stopped", "cancelled", "completed", "entered-in-error"];

const now = (clock: string): PyDatetime => fromIsoformat(clock);

/** Latest performed time among pre-cutoff Procedures with these codes (undefined when none). */
export function latestProcedure(reader: FhirReader, mrn: string, codes: readonly string[]): PyDatetime | undefined {
  const entries = fetchResources(reader, "Procedure", mrn, { codes }).filter((r) => beforeCutoff(r));
  let last: PyDatetime | undefined;
  for (const r of entries) {
    const performed = performedTime(r);
    if (!truthy(performed)) continue;
    const t = parseTime(performed);
    if (!last || dtCmp(t, last) > 0) last = t;
  }
  return last;
}

/** NOW - t > days (TypeError when mixing naive/aware). */
function olderThan(nowT: PyDatetime, t: PyDatetime, us: number): boolean {
  return dtDiffUs(nowT, t) > us;
}

// ---- task1: CT follow-up
export const ctFollowUp = baseFact(function ctFollowUp(reader: FhirReader, mrn: string, clock: string): { last?: PyDatetime; required: boolean } {
  const last = latestProcedure(reader, mrn, CT_CODES);
  const cutoff = now(clock).us - 365 * DAY_US;
  if (last && last.aware !== now(clock).aware) throw new PyError("TypeError", "can't compare offset-naive and offset-aware datetimes");
  return { last, required: !last || last.us < cutoff };
});

function medText(res: Py): string {
  return pyLower(pyGet(at(res, "medicationCodeableConcept"), "text", ""));
}

// ---- task2: DVT prophylaxis
export const dvtProphylaxis = baseFact(function dvtProphylaxis(reader: FhirReader, mrn: string): { anticoagulants: number; heparin5k: number; needCreate: boolean; needStops: number } {
  const entries = fetchResources(reader, "MedicationRequest", mrn, { status: "active" }).filter((r) => beforeCutoff(r));
  const acs = entries.filter((e) => {
    const t = medText(e);
    return ANTICOAGULANTS.some((k) => t.includes(k));
  });
  const heps = acs.filter((e) => {
    const t = medText(e);
    return t.includes("heparin") && (t.includes("5,000") || t.includes("5000"));
  });
  return { anticoagulants: acs.length, heparin5k: heps.length, needCreate: heps.length === 0, needStops: Math.max(acs.length - 1, 0) };
});

// ---- task3: heart-rate averages
function pySum(vals: Py[]): Py {
  let acc: Py = 0n;
  for (const v of vals) {
    if (typeof acc === "bigint" && (typeof v === "bigint" || typeof v === "boolean")) acc = acc + (typeof v === "boolean" ? (v ? 1n : 0n) : v);
    else if (typeof v === "number" || typeof v === "bigint" || typeof v === "boolean") {
      const a: number = typeof acc === "bigint" ? intToFloat(acc) : (acc as number);
      const b: number = typeof v === "bigint" ? intToFloat(v) : typeof v === "boolean" ? Number(v) : v;
      acc = a + b;
    } else throw new PyError("TypeError", `unsupported operand type(s) for +: '${typeName(acc)}' and '${typeName(v)}'`);
  }
  return acc;
}

function avg(vals: Py[]): number | null {
  if (vals.length === 0) return null;
  const s = pySum(vals);
  return (typeof s === "bigint" ? Number(s) : (s as number)) / vals.length;
}

export const heartRateAverages = baseFact(function heartRateAverages(reader: FhirReader, mrn: string, clock: string): { avg6: number | null; avg12: number | null; n6: number; n12: number } {
  const nowT = now(clock);
  const six = { ...nowT, us: nowT.us - 6 * HOUR_US };
  const twelve = { ...nowT, us: nowT.us - 12 * HOUR_US };
  const v6: Py[] = [];
  const v12: Py[] = [];
  for (const res of fetchResources(reader, "Observation", mrn, { codes: ["HEARTRATE"] })) {
    if (!beforeCutoff(res, true)) continue;
    const tsStr = pyGet(res, "effectiveDateTime");
    if (!truthy(tsStr)) continue;
    let ts: PyDatetime;
    try {
      ts = parseTime(tsStr);
    } catch (e) {
      if (e instanceof PyError) continue;
      throw e;
    }
    const vq = pyGet(res, "valueQuantity", new PyDict());
    if (!pyIn("value", vq)) continue;
    const bpm = getItem(vq, "value");
    if (dtCmp(twelve, ts) <= 0 && dtCmp(ts, nowT) <= 0) {
      v12.push(bpm);
      if (dtCmp(six, ts) <= 0) v6.push(bpm);
    }
  }
  return { avg6: avg(v6), avg12: avg(v12), n6: v6.length, n12: v12.length };
});

// ---- task4: catheter dwell
export const catheterDwell = baseFact(function catheterDwell(reader: FhirReader, mrn: string, clock: string): { last?: PyDatetime; activeRemovalOrders: number; removalRequired: boolean; over48h: boolean } {
  const last = latestProcedure(reader, mrn, ["NUR1373"]);
  const removals = fetchResources(reader, "ServiceRequest", mrn, { codes: ["NUR1373"], status: "active" }).filter((r) => beforeCutoff(r));
  const over48h = last !== undefined && olderThan(now(clock), last, 48 * HOUR_US);
  return { last, activeRemovalOrders: removals.length, over48h, removalRequired: over48h && removals.length === 0 };
});

// ---- task5: renal mass follow-up
export const renalMass = baseFact(function renalMass(reader: FhirReader, mrn: string, clock: string): { diagnosis: boolean; lastCt?: PyDatetime; needsOrders: boolean } {
  const dx = fetchResources(reader, "Condition", mrn, { codes: ["C64.2"] }).filter((r) => beforeCutoff(r));
  if (dx.length === 0) return { diagnosis: false, needsOrders: false };
  const lastCt = latestProcedure(reader, mrn, [...CT_CODES, "74177"]);
  return { diagnosis: true, lastCt, needsOrders: !lastCt || olderThan(now(clock), lastCt, 90 * DAY_US) };
});

// ---- task6: thyroid protocol
function labValues(reader: FhirReader, mrn: string, code: string): [Py, PyDatetime][] {
  return fetchResources(reader, "Observation", mrn, { codes: [code] })
    .filter((r) => beforeCutoff(r))
    .map((r) => [at(r, "valueQuantity", "value"), parseTime(at(r, "effectiveDateTime"))]);
}

function maxByTime(vals: [Py, PyDatetime][]): [Py, PyDatetime] | undefined {
  let best: [Py, PyDatetime] | undefined;
  for (const v of vals) if (!best || dtCmp(v[1], best[1]) > 0) best = v;
  return best;
}

export const thyroid = baseFact(function thyroid(reader: FhirReader, mrn: string): { branchA: boolean; branchB: boolean; lastTsh?: Py; lastFt4?: Py } {
  const tsh = labValues(reader, mrn, "TSH");
  const ft4 = labValues(reader, mrn, "FT4");
  const lastTsh = maxByTime(tsh);
  const lastFt4 = maxByTime(ft4);
  const high = tsh.filter(([v]) => gt(v, 10n)).map(([, d]) => d);
  high.sort(dtCmp);
  let branchA = false;
  for (let i = 0; i < high.length && !branchA; i++)
    for (let j = i + 1; j < high.length; j++)
      if (tdDays(dtDiffUs(high[j]!, high[i]!)) >= 30) {
        branchA = true;
        break;
      }
  const branchB =
    lastTsh !== undefined && lastTsh[0] !== null && ge(lastTsh[0], 4.5) && le(lastTsh[0], 10n) && lastFt4 !== undefined && lastFt4[0] !== null && ge(lastFt4[0], 0.8) && le(lastFt4[0], 1.8);
  return { branchA, branchB, lastTsh: lastTsh?.[0], lastFt4: lastFt4?.[0] };
});

// ---- task7: QTc
export const qtc = baseFact(function qtc(reader: FhirReader, mrn: string): { hasQtc: boolean; value?: Py; prolonged: boolean } {
  const entries = fetchResources(reader, "Observation", mrn, { codes: ["QTCINTERVAL"] }).filter((r) => beforeCutoff(r));
  if (entries.length === 0) return { hasQtc: false, prolonged: false };
  let best: Py | undefined;
  let bestKey: Py = null;
  for (const e of entries) {
    const key = pyGet(getItem(e, "meta"), "lastUpdated", "");
    if (best === undefined) {
      best = e;
      bestKey = key;
      continue;
    }
    if (typeof key !== "string" || typeof bestKey !== "string") throw new PyError("TypeError", "'>' not supported between lastUpdated values");
    if (key > bestKey) {
      best = e;
      bestKey = key;
    }
  }
  const value = at(best!, "valueQuantity", "value");
  return { hasQtc: true, value, prolonged: gt(value, 500n) };
});

// ---- task8: naloxone coverage
export const naloxone = baseFact(function naloxone(reader: FhirReader, mrn: string): { opioids: number; naloxone: number; needsNaloxone: boolean } {
  const baseline = fetchResources(reader, "MedicationRequest", mrn, { status: "active" }).filter((r) => beforeCutoff(r));
  const opioids = baseline.filter((e) => OPIOIDS.some((w) => medText(e).includes(w)));
  const nalox = baseline.filter((e) => medText(e).includes("naloxone") || medText(e).includes("narcan"));
  return { opioids: opioids.length, naloxone: nalox.length, needsNaloxone: opioids.length > 0 && nalox.length === 0 };
});

// ---- task9: flu vaccine
export const fluVaccine = baseFact(function fluVaccine(reader: FhirReader, mrn: string, clock: string): { last?: PyDatetime; needsVaccine: boolean } {
  const last = latestProcedure(reader, mrn, ["90686"]);
  return { last, needsVaccine: !last || olderThan(now(clock), last, 365 * DAY_US) };
});

// ---- task10: COVID booster
export const covidBooster = baseFact(function covidBooster(reader: FhirReader, mrn: string, clock: string): { last?: PyDatetime; daysSince?: number; needsBooster: boolean } {
  const procs = fetchResources(reader, "Procedure", mrn, { codes: ["COVIDVACCINE"] }).filter((r) => beforeCutoff(r));
  const meds = fetchResources(reader, "MedicationRequest", mrn, { status: "completed" }).filter((r) => beforeCutoff(r) && medText(r).includes("covid-19 vac"));
  const dates: PyDatetime[] = [];
  for (const r of [...procs, ...meds]) {
    let dt = performedTime(r);
    if (!truthy(dt)) dt = pyGet(r, "authoredOn");
    if (truthy(dt)) dates.push(parseTime(dt));
  }
  let last: PyDatetime | undefined;
  for (const d of dates) if (!last || dtCmp(d, last) > 0) last = d;
  if (!last) return { needsBooster: true };
  const daysSince = dateDiffDays(now(clock), last);
  return { last, daysSince, needsBooster: daysSince > 365 };
});

