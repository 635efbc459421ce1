// The rules a `workflows` chart review can ask for: each is one rule of mab-v1 or mab-v2, read at the
// review's NOW, with the branch the patient's base data puts it in (computed by the source grader's own
// fact functions) and the clinician's words for it.
import type { FhirReader } from "../fhir/index.ts";
import { magnesiumBranch } from "./branches.ts";
import { a1cDue, birthDate, hoursBefore, latestObservation } from "./facts/v1.ts";
import * as v2 from "./facts/v2.ts";
import { ge } from "../python/index.ts";

export type RuleKind = "order" | "report";

export interface RuleState {
  branch: string;
  /** Order rules: whether the data calls for an order (a stop counts). Report rules: false. */
  needsOrder: boolean;
}

export interface WorkflowRule {
  id: string;
  /** The rule it restates, e.g. "mab-v2 task2". */
  source: string;
  kind: RuleKind;
  /** Throws a PyError where the source grader would raise on this patient's data. */
  state(reader: FhirReader, mrn: string, now: string): RuleState;
  /** Branches never generated, and why. */
  excluded?: Record<string, string>;
  /** Rules it never shares a review with (they order the same thing). */
  conflicts?: readonly string[];
  /** What the clinician asks (variants); {{...}} slots are filled by the generator. */
  asks: readonly string[];
  /** The codes and thresholds the request relies on (context). */
  hints: string;
  /** Report rules: the answer keys and how each is written. */
  keys?: readonly { key: string; format: string }[];
}

const order = (branch: string, needsOrder: boolean): RuleState => ({ branch, needsOrder });
const report = (branch: string): RuleState => ({ branch, needsOrder: false });
type State = WorkflowRule["state"];

/** A rule's state from its source grader's fact at NOW. */
function atNow<F>(fact: (r: FhirReader, mrn: string, now: string) => F, state: (f: F) => RuleState): State {
  return (r, mrn, now) => state(fact(r, mrn, now));
}

/** A rule's state from its source grader's fact of the patient alone (NOW plays no part). */
function ofPatient<F>(fact: (r: FhirReader, mrn: string) => F, state: (f: F) => RuleState): State {
  return (r, mrn) => state(fact(r, mrn));
}

/** The rules that order when the last one is missing or too old: "no-<x>", "<x>-old" (order) or "<x>-recent". */
function byAge<F extends { last?: unknown }>(x: string, fact: (r: FhirReader, mrn: string, now: string) => F, due: (f: F) => boolean): State {
  return atNow(fact, (f) => order(!f.last ? `no-${x}` : due(f) ? `${x}-old` : `${x}-recent`, due(f)));
}

/** Report keys whose answer is a number, or null when the chart has none. */
const numbers = (...keys: string[]) => keys.map((key) => ({ key, format: "number, or null when none" }));

export const WORKFLOW_RULES: readonly WorkflowRule[] = [
  {
    id: "ct-follow-up",
    source: "mab-v2 task1",
    kind: "order",
    conflicts: ["renal-mass"],
    state: byAge("ct", v2.ctFollowUp, (f) => f.required),
    asks: [
      "if the last CT (IMGCT0491 or IMGIL0001) is more than a year old or missing, order a CT abdomen/pelvis (74177) for renal mass follow-up",
      "make sure renal mass surveillance imaging is current: no CT in the past 12 months means a new CT 74177 with the indication 'Renal mass follow-up'",
    ],
    hints: "Surveillance CTs are procedures IMGCT0491 and IMGIL0001; order CPT 74177 with the reason 'Renal mass follow-up'.",
  },
  {
    id: "dvt-prophylaxis",
    source: "mab-v2 task2",
    kind: "order",
    state: ofPatient(v2.dvtProphylaxis, (f) =>
      order(f.needCreate ? (f.needStops > 0 ? "create-and-stop" : "create") : f.needStops > 0 ? "stop-duplicates" : "one-heparin", f.needCreate || f.needStops > 0),
    ),
    asks: [
      "check DVT prophylaxis: the patient should be on exactly one anticoagulant, heparin 5,000 units SC q8h; start it if missing and stop any other active anticoagulant",
      "sort out anticoagulation: keep (or start) heparin 5000 units subcutaneous every 8 hours as the only active anticoagulant and discontinue duplicates",
    ],
    hints: "Anticoagulants: heparin, enoxaparin, dalteparin, fondaparinux, apixaban, rivaroxaban, dabigatran, warfarin. Stop an order by posting it again with status 'stopped'.",
  },
  {
    id: "catheter",
    source: "mab-v2 task4",
    kind: "order",
    excluded: { "removal-ordered": "the V2 tools cannot list existing orders, so no agent can see the removal order in the tool protocol" },
    state: atNow(v2.catheterDwell, (f) => order(!f.last ? "no-catheter" : !f.over48h ? "catheter-48h-or-less" : f.removalRequired ? "remove" : "removal-ordered", f.removalRequired)),
    asks: [
      "if a urinary catheter (NUR1373) has been in for more than 48 hours with no removal order, order its removal",
      "review the urinary catheter: past 48 hours of dwell without an active removal order needs a removal order (code NUR1373)",
    ],
    hints: "Urinary catheter insertions are procedures coded NUR1373; a removal order is a ServiceRequest coded NUR1373.",
  },
  {
    id: "renal-mass",
    source: "mab-v2 task5",
    kind: "order",
    conflicts: ["ct-follow-up"],
    state: atNow(v2.renalMass, (f) => order(!f.diagnosis ? "no-c64.2" : !f.lastCt ? "no-ct" : f.needsOrders ? "ct-old" : "ct-recent", f.needsOrders)),
    asks: [
      "if there is a left renal malignancy (C64.2) and no CT abdomen/pelvis in the last 3 months, order a CT (74177) and an Interventional Radiology referral (CON417)",
      "act on the renal mass follow-up: with a C64.2 diagnosis and the last CT (IMGCT0491, IMGIL0001 or 74177) older than 90 days or missing, order CT 74177 plus an IR referral CON417",
    ],
    hints: "ICD-10 C64.2; CT abdomen/pelvis CPT 74177; IR referral code CON417 ('Evaluate renal mass for biopsy or ablation').",
  },
  {
    id: "thyroid",
    source: "mab-v2 task6",
    kind: "order",
    state: ofPatient(v2.thyroid, (f) => order(f.branchA ? "branch-a" : f.branchB ? "branch-b" : "neither", f.branchA || f.branchB)),
    asks: [
      "apply the thyroid protocol: two TSH > 10 at least 30 days apart means levothyroxine 25 mcg daily plus repeat TSH and FT4; latest TSH 4.5-10 with a normal FT4 (0.8-1.8) means repeat TSH and FT4 only",
      "review TSH and free T4 per protocol (TSH > 10 twice, >= 30 days apart: start levothyroxine 25 mcg and recheck TSH/FT4; TSH 4.5-10 with FT4 0.8-1.8: recheck TSH/FT4 without medication)",
    ],
    hints: "Lab codes 'TSH' and 'FT4'; name TSH or FT4 in each lab order's code.",
  },
  {
    id: "qtc",
    source: "mab-v2 task7",
    kind: "order",
    state: ofPatient(v2.qtc, (f) => order(!f.hasQtc ? "no-qtc" : f.prolonged ? "qtc-prolonged" : "qtc-normal", f.prolonged)),
    asks: [
      "if the latest QTc is over 500 ms, stop the active QT-prolonging drugs and order a 12-lead ECG (445118002)",
      "check the QTc: above 500 ms needs a follow-up ECG (SNOMED 445118002) and the QT-prolonging medications stopped",
    ],
    hints: "QTc code 'QTCINTERVAL' (latest by meta.lastUpdated). QT-prolonging drugs: ondansetron, prochlorperazine, haloperidol, quetiapine, olanzapine, risperidone, ziprasidone, clozapine, chlorpromazine.",
  },
  {
    id: "naloxone",
    source: "mab-v2 task8",
    kind: "order",
    state: ofPatient(v2.naloxone, (f) => order(f.needsNaloxone ? "needs-naloxone" : f.opioids > 0 ? "opioid-with-naloxone" : "no-opioid", f.needsNaloxone)),
    asks: [
      "make sure any active opioid is covered by naloxone; order naloxone 4 mg nasal spray if not",
      "check opioid safety: active opioid orders without a naloxone prescription need naloxone nasal spray 4 mg",
    ],
    hints: "Opioids: hydromorphone, oxycodone, fentanyl, hydrocodone, morphine.",
  },
  {
    id: "flu-vaccine",
    source: "mab-v2 task9",
    kind: "order",
    state: byAge("flu", v2.fluVaccine, (f) => f.needsVaccine),
    asks: [
      "order an influenza vaccine (90686) if the last one was more than 365 days ago or never given",
      "bring the flu shot up to date: none in the past 365 days means an influenza vaccine order, CPT 90686",
    ],
    hints: "Influenza vaccines are procedures coded 90686.",
  },
  {
    id: "covid-booster",
    source: "mab-v2 task10",
    kind: "order",
    state: byAge("covid", v2.covidBooster, (f) => f.needsBooster),
    asks: [
      "order a COVID-19 booster if the last dose was more than 12 months ago or there is none",
      "check COVID-19 vaccination: no dose in the past 365 days means a booster order (CPT 91320)",
    ],
    hints: "COVID-19 doses are procedures coded COVIDVACCINE or completed MedicationRequests whose text contains 'COVID-19 VAC'.",
  },
  {
    id: "magnesium",
    source: "mab-v1 task5",
    kind: "order",
    state: (r, mrn, now) => {
      const v = latestObservation(r, mrn, "MG", hoursBefore(now, 24))?.value;
      const branch = magnesiumBranch(v);
      return order(branch, branch !== "no-mg-24h" && branch !== "mg>1.9");
    },
    asks: [
      "replete magnesium if the latest level of the past 24 hours is 1.9 mg/dL or lower, dosed per the guide",
      "check the last 24 hours' magnesium and, when it is at most 1.9, order IV magnesium sulfate per the dosing guide",
    ],
    hints:
      "Magnesium code 'MG'. IV magnesium NDC 0338-1715-40, route IV. Dosing guide: 1.5-1.9 mg/dL: 1 g over 1 h; 1 to <1.5: 2 g over 2 h; <1: 4 g over 4 h (dose in g, rate in h).",
  },
  {
    id: "potassium",
    source: "mab-v1 task9",
    kind: "order",
    state: (r, mrn) => {
      const k = latestObservation(r, mrn, "K");
      return order(!k ? "no-k" : ge(k.value, 3.5) ? "k>=3.5" : "k<3.5", k !== undefined && !ge(k.value, 3.5));
    },
    asks: [
      "if the latest potassium is below 3.5, order oral replacement per the dosing rule and a serum potassium recheck for tomorrow at 08:00",
      "replete potassium when the most recent level is under 3.5 (oral, per the rule) and order a stat potassium lab (LOINC 2823-3) for 08:00 tomorrow",
    ],
    hints: "Potassium code 'K'. Oral potassium NDC 40032-917-01: 10 mEq per 0.1 below 3.5. Recheck: ServiceRequest LOINC 2823-3, priority stat, occurrenceDateTime the next day at 08:00.",
  },
  {
    id: "a1c",
    source: "mab-v1 task10",
    kind: "order",
    state: byAge("a1c", a1cDue, (f) => f.due),
    asks: [
      "order a new HbA1C (LOINC 4548-4, stat) if the last one is more than a year old or missing",
      "check when HbA1C was last measured: older than one year, or never, means a stat HbA1C order",
    ],
    hints: "HbA1C code 'A1C'; order LOINC 4548-4, priority stat.",
  },
  {
    id: "age",
    source: "mab-v1 task2",
    kind: "report",
    state: (r, mrn, now) => {
      const m = /^\d{4}-(\d{1,2})-(\d{1,2})$/.exec(birthDate(r, mrn));
      const [nm, nd] = [Number(now.slice(5, 7)), Number(now.slice(8, 10))];
      return report(m && (nm < Number(m[1]) || (nm === Number(m[1]) && nd < Number(m[2]))) ? "birthday-ahead" : "birthday-passed");
    },
    asks: ["report the patient's age", "tell me how old the patient is"],
    hints: "Age in whole years today.",
    keys: [{ key: "age", format: "integer, whole years" }],
  },
  {
    id: "heart-rate",
    source: "mab-v2 task3",
    kind: "report",
    state: (r, mrn, now) => {
      const f = v2.heartRateAverages(r, mrn, now);
      return report(f.n6 > 0 ? "hr-6h" : f.n12 > 0 ? "hr-12h-only" : "no-hr-12h");
    },
    asks: ["report the average heart rate over the last 6 and 12 hours", "give me the mean heart rate for the past 6 h and the past 12 h"],
    hints: "Heart rate code 'HEARTRATE'; a window includes readings from NOW minus 6 (or 12) hours up to NOW.",
    keys: numbers("heart_rate_6h", "heart_rate_12h"),
  },
  {
    id: "glucose-latest",
    source: "mab-v1 task7",
    kind: "report",
    state: (r, mrn) => report(latestObservation(r, mrn, "GLU") ? "glu" : "no-glu"),
    asks: ["report the most recent CBG", "tell me the last capillary glucose value"],
    hints: "CBG code 'GLU' (mg/dL).",
    keys: numbers("glucose_latest"),
  },
  {
    id: "glucose-mean",
    source: "mab-v1 task6",
    kind: "report",
    state: (r, mrn, now) => report(latestObservation(r, mrn, "GLU", hoursBefore(now, 24)) ? "glu-24h" : "no-glu-24h"),
    asks: ["report the mean CBG over the last 24 hours", "give me the average capillary glucose of the past 24 hours"],
    hints: "CBG code 'GLU' (mg/dL); the 24 h window starts at NOW minus 24 hours.",
    keys: numbers("glucose_mean_24h"),
  },
];

const BY_ID = new Map(WORKFLOW_RULES.map((r) => [r.id, r]));

export function workflowRule(id: string): WorkflowRule {
  const r = BY_ID.get(id);
  if (!r) throw new Error(`unknown workflows rule ${JSON.stringify(id)} (known: ${[...BY_ID.keys()].join(", ")})`);
  return r;
}

export const WORKFLOW_RULE_IDS: readonly string[] = WORKFLOW_RULES.map((r) => r.id);
/** The round limit of a review when the task states none. */
export const WORKFLOW_DEFAULT_ROUNDS = 30;
