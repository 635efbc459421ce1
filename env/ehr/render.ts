// Chart records -> FHIR JSON text (compact, key order as the real server writes it), built with
// templates: this is the hot path of generation (~785k resources in a few seconds).
import { LABS, VITALS } from "./catalog.ts";
import { type Chart, type CondRec, type MedRec, type ObsRec, type OrderRec, type ProcRec } from "./chart.ts";
import type { Rng } from "../util/index.ts";
import { iso, isoMillis } from "./time.ts";

const LAB_CATEGORY = `[{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/observation-category","code":"laboratory","display":"Laboratory"}]}]`;
const VITAL_CATEGORY = `[{"coding":[{"system":"http://hl7.org/fhir/observation-category","code":"vital-signs","display":"Vital Signs"}]}]`;
const INTERP = (code: string, display: string) =>
  `,"interpretation":[{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation","code":"${code}","display":"${display}"}]}]`;
const FLAG_TEXT = ["", INTERP("LOW", "Low"), INTERP("HIGH", "High"), INTERP("(NONE)", "(NONE)")];

const q = JSON.stringify;

/** `"status":...,"category":...,"code":...` prefix per observation code. */
const OBS_HEAD = new Map<string, string>();
/** `,"valueQuantity":{"value":` and the unit tail per code. */
const OBS_UNIT = new Map<string, string>();
for (const def of Object.values(LABS)) {
  OBS_HEAD.set(def.code, `"status":"final","category":${LAB_CATEGORY},"code":{"coding":[{"system":"http://loinc.org","code":${q(def.code)},"display":${q(def.code)}}],"text":${q(def.code)}}`);
  OBS_UNIT.set(def.code, `,"unit":${q(def.unit)},"system":"http://unitsofmeasure.org","code":${q(def.ucum)}}`);
}
for (const code of [...Object.keys(VITALS), "BP"]) {
  OBS_HEAD.set(`v:${code}`, `"status":"final","category":${VITAL_CATEGORY},"code":{"coding":[{"system":"http://loinc.org","code":${q(code)},"display":${q(code)}}],"text":${q(code)}}`);
  const def = VITALS[code];
  if (def) OBS_UNIT.set(`v:${code}`, `,"unit":${q(def.unit)},"system":"http://unitsofmeasure.org","code":${q(def.ucum)}}`);
}

export type Rec =
  | { type: "Observation"; rec: ObsRec }
  | { type: "Condition"; rec: CondRec }
  | { type: "MedicationRequest"; rec: MedRec }
  | { type: "Procedure"; rec: ProcRec }
  | { type: "ServiceRequest"; rec: OrderRec };

export function subjectOf(mrn: string): string {
  return `{"reference":"Patient/${mrn}","identifier":{"system":"http://terminology.hl7.org/CodeSystem/v2-0203","value":"${mrn}"}}`;
}

function observation(o: ObsRec, subject: string): string {
  const key = o.vital ? `v:${o.code}` : o.code;
  const value = o.code === "BP" ? `,"valueString":${o.lex}` : `,"valueQuantity":{"value":${o.lex}${OBS_UNIT.get(key)}`;
  return `${OBS_HEAD.get(key)},"subject":${subject},"effectiveDateTime":"${iso(o.time)}","issued":"${iso(o.issued)}"${value}${FLAG_TEXT[o.flag]}}`;
}

function condition(c: CondRec, subject: string): string {
  const status = c.active ? `{"system":"http://terminology.hl7.org/CodeSystem/condition-clinical","code":"active","display":"Active"}` : `{"system":"http://terminology.hl7.org/CodeSystem/condition-clinical","code":"resolved","display":"Resolved"}`;
  return (
    `"clinicalStatus":{"coding":[${status}]},"verificationStatus":{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/condition-ver-status","code":"confirmed","display":"Confirmed"}]},` +
    `"category":[{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/condition-category","code":"problem-list-item","display":"Problem List Item"}]}],` +
    `"code":{"coding":[{"system":"http://hl7.org/fhir/sid/icd-10-cm","code":${q(c.def.code)},"display":${q(c.def.display)}}],"text":${q(c.def.display)}},"subject":${subject},` +
    `"onsetDateTime":"${iso(c.onset)}"${c.abated !== undefined ? `,"abatementDateTime":"${iso(c.abated)}"` : ""},"recordedDate":"${iso(c.recorded)}"}`
  );
}

function medication(m: MedRec, subject: string): string {
  const d = m.drug;
  const dose = `${d.dose} ${d.doseUnit}`;
  return (
    `"status":"${m.status}","intent":"order","medicationCodeableConcept":{"coding":[{"system":"http://hl7.org/fhir/sid/ndc","code":${q(d.ndc)},"display":${q(d.text)}},` +
    `{"system":"http://www.nlm.nih.gov/research/umls/rxnorm","code":${q(d.rxnorm)},"display":${q(d.text)}}],"text":${q(d.text)}},"subject":${subject},"authoredOn":"${iso(m.authored)}",` +
    `"dosageInstruction":[{"text":${q(`${dose}, ${d.route}, ${d.timing}`)},"timing":{"repeat":{"frequency":${d.frequency},"period":${d.period},"periodUnit":"${d.periodUnit}"},"code":{"text":${q(d.timing)}}}` +
    `${d.prn ? `,"asNeededBoolean":true` : ""},"route":{"text":${q(d.route)}},"doseAndRate":[{"doseQuantity":{"value":${d.dose},"unit":${q(d.doseUnit)}}}]}]}`
  );
}

function procedure(p: ProcRec, subject: string): string {
  return `"status":"completed","code":{"coding":[{"system":"http://www.ama-assn.org/go/cpt","code":${q(p.def.code)},"display":${q(p.def.display)}}],"text":${q(p.def.display)}},"subject":${subject},${p.end === undefined ? `"performedDateTime":"${iso(p.time)}"` : `"performedPeriod":{"start":"${iso(p.time)}","end":"${iso(p.end)}"}`}}`;
}

function serviceRequest(o: OrderRec, subject: string): string {
  return (
    `"status":"${o.status}","intent":"order","priority":"${o.priority}","code":{"coding":[{"system":${q(o.def.system)},"code":${q(o.def.code)},"display":${q(o.def.display)}}],"text":${q(o.def.display)}},` +
    `"subject":${subject}${o.occurrence !== undefined ? `,"occurrenceDateTime":"${iso(o.occurrence)}"` : ""},"authoredOn":"${iso(o.authored)}"}`
  );
}

/** Body of the resource after `"meta":{...},` */
export function body(r: Rec, subject: string): string {
  switch (r.type) {
    case "Observation":
      return observation(r.rec, subject);
    case "Condition":
      return condition(r.rec, subject);
    case "MedicationRequest":
      return medication(r.rec, subject);
    case "Procedure":
      return procedure(r.rec, subject);
    case "ServiceRequest":
      return serviceRequest(r.rec, subject);
  }
}

/**
 * Load order of one chart: records grouped by type and code, shuffled within the group, split
 * into chunks and the chunks interleaved, so that ids are grouped per patient but not
 * chronological within a code (like the real bulk load). QTc stays in time order: its grader
 * picks the latest by meta.lastUpdated, which then agrees with the latest by date.
 */
export function loadOrder(chart: Chart, rng: Rng): Rec[] {
  const groups = new Map<string, Rec[]>();
  const put = (key: string, r: Rec) => {
    let g = groups.get(key);
    if (!g) groups.set(key, (g = []));
    g.push(r);
  };
  for (const rec of chart.obs) put(`O:${rec.vital ? "v" : ""}${rec.code}`, { type: "Observation", rec });
  for (const rec of chart.conditions) put("Condition", { type: "Condition", rec });
  for (const rec of chart.meds) put("MedicationRequest", { type: "MedicationRequest", rec });
  for (const rec of chart.procedures) put(`P:${rec.def.code}`, { type: "Procedure", rec });
  for (const rec of chart.orders) put("ServiceRequest", { type: "ServiceRequest", rec });
  const chunks: Rec[][] = [];
  for (const [key, g] of groups) {
    if (key === "O:QTCINTERVAL") {
      g.sort((a, b) => (a.rec as ObsRec).time - (b.rec as ObsRec).time);
      chunks.push(g);
      continue;
    }
    rng.shuffle(g);
    for (let i = 0; i < g.length; ) {
      const size = rng.int(12, 260);
      chunks.push(g.slice(i, i + size));
      i += size;
    }
  }
  rng.shuffle(chunks);
  return chunks.flat();
}

/** Metadata of a bulk load: ids in load order, lastUpdated increasing with id, random source. */
export class MetaClock {
  private ms: number;
  constructor(
    private readonly rng: Rng,
    start: string,
  ) {
    this.ms = Date.parse(start);
  }

  next(): string {
    this.ms += this.rng.int(1, 8);
    return `{"versionId":"1","lastUpdated":"${isoMillis(this.ms)}","source":"#${this.rng.alnum(16)}"}`;
  }
}

