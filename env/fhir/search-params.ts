// The search parameters of each resource type and how their values are read from a resource.
// One definition serves both the base indexes (built at load) and the overlay matcher, so the
// two can never disagree. Changing what a definition reads changes the indexes that NDJSON index
// sidecars hold: bump INDEX_VERSION (ndjson-index.ts) so sidecars made before are not used.
import { parseDateRange, type DateRange } from "./dates.ts";
import { Decimal } from "./json.ts";

export interface Token {
  /** undefined: the coding has no system. */
  system: string | undefined;
  code: string;
}

export interface Quantity {
  value: number;
  system: string | undefined;
  code: string | undefined;
  unit: string | undefined;
}

type R = Record<string, unknown>;

interface Base<T extends string> {
  name: string;
  type: T;
}
export interface TokenParam extends Base<"token"> {
  tokens(r: R): Token[];
}
export interface ReferenceParam extends Base<"reference"> {
  /** Normalized "Type/id" references. */
  refs(r: R): string[];
}
export interface StringParam extends Base<"string"> {
  strings(r: R): string[];
}
export interface DateParam extends Base<"date"> {
  ranges(r: R): DateRange[];
}
export interface QuantityParam extends Base<"quantity"> {
  quantities(r: R): Quantity[];
}
export type SearchParamDef = TokenParam | ReferenceParam | StringParam | DateParam | QuantityParam;

// ---- value readers ----

function obj(v: unknown): R | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Decimal) ? (v as R) : undefined;
}
function list(v: unknown): unknown[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}
function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}
function num(v: unknown): number | undefined {
  if (typeof v === "number") return v;
  if (v instanceof Decimal) return Number(v.raw);
  return undefined;
}

function codingTokens(codings: unknown, out: Token[]): void {
  for (const c of list(codings)) {
    const o = obj(c);
    const code = o && str(o.code);
    if (code !== undefined) out.push({ system: str(o!.system), code });
  }
}
/** Tokens of CodeableConcept(s); `text` never matches a token search. */
function conceptTokens(value: unknown): Token[] {
  const out: Token[] = [];
  for (const cc of list(value)) codingTokens(obj(cc)?.coding, out);
  return out;
}
function identifierTokens(value: unknown): Token[] {
  const out: Token[] = [];
  for (const id of list(value)) {
    const o = obj(id);
    const v = o && str(o.value);
    if (v !== undefined) out.push({ system: str(o!.system), code: v });
  }
  return out;
}
function codeToken(value: unknown, system?: string): Token[] {
  const code = str(value);
  return code === undefined ? [] : [{ system, code }];
}

const REF_RE = /(?:^|\/)([A-Z][A-Za-z]*)\/([A-Za-z0-9\-.]{1,64})(?:\/_history\/[^/]*)?$/;
/** "Patient/S1", "http://host/fhir/Patient/S1" or "Patient/S1/_history/2" -> "Patient/S1". */
export function normalizeReference(ref: string): string | undefined {
  const m = REF_RE.exec(ref);
  return m ? `${m[1]}/${m[2]}` : undefined;
}
function referenceValues(value: unknown, onlyType?: string): string[] {
  const out: string[] = [];
  for (const v of list(value)) {
    const ref = str(obj(v)?.reference);
    const norm = ref === undefined ? undefined : normalizeReference(ref);
    if (norm !== undefined && (onlyType === undefined || norm.startsWith(onlyType + "/"))) out.push(norm);
  }
  return out;
}

function dateOf(value: unknown): DateRange | undefined {
  const s = str(value);
  return s === undefined ? undefined : parseDateRange(s);
}
function periodOf(value: unknown): DateRange | undefined {
  const o = obj(value);
  if (!o) return undefined;
  const start = dateOf(o.start);
  const end = dateOf(o.end);
  if (!start && !end) return undefined;
  return { lo: start ? start.lo : -Infinity, hi: end ? end.hi : Infinity };
}
function dates(...values: (DateRange | undefined)[]): DateRange[] {
  return values.filter((v): v is DateRange => v !== undefined);
}

function humanNameParts(value: unknown, part: "all" | "family" | "given"): string[] {
  const out: string[] = [];
  for (const n of list(value)) {
    const o = obj(n);
    if (!o) continue;
    if (part !== "given") {
      const f = str(o.family);
      if (f !== undefined) out.push(f);
    }
    if (part !== "family") for (const g of list(o.given)) if (typeof g === "string") out.push(g);
    if (part === "all") {
      const t = str(o.text);
      if (t !== undefined) out.push(t);
      for (const p of [...list(o.prefix), ...list(o.suffix)]) if (typeof p === "string") out.push(p);
    }
  }
  return out;
}
function addressParts(value: unknown, field?: "city" | "state" | "postalCode" | "country"): string[] {
  const out: string[] = [];
  for (const a of list(value)) {
    const o = obj(a);
    if (!o) continue;
    const fields = field ? [field] : ["text", "line", "city", "district", "state", "postalCode", "country"];
    for (const f of fields) for (const v of list(o[f])) if (typeof v === "string") out.push(v);
  }
  return out;
}
function telecomTokens(value: unknown, system?: string): Token[] {
  const out: Token[] = [];
  for (const t of list(value)) {
    const o = obj(t);
    const v = o && str(o.value);
    if (v !== undefined && (system === undefined || o!.system === system)) out.push({ system: undefined, code: v });
  }
  return out;
}
function quantityOf(value: unknown): Quantity[] {
  const o = obj(value);
  const v = o && num(o.value);
  if (v === undefined) return [];
  return [{ value: v, system: str(o!.system), code: str(o!.code), unit: str(o!.unit) }];
}

// ---- definitions ----

const token = (name: string, tokens: (r: R) => Token[]): TokenParam => ({ name, type: "token", tokens });
const reference = (name: string, refs: (r: R) => string[]): ReferenceParam => ({ name, type: "reference", refs });
const string = (name: string, strings: (r: R) => string[]): StringParam => ({ name, type: "string", strings });
const date = (name: string, ranges: (r: R) => DateRange[]): DateParam => ({ name, type: "date", ranges });
const quantity = (name: string, quantities: (r: R) => Quantity[]): QuantityParam => ({ name, type: "quantity", quantities });

const subjectOrPatient = (r: R): unknown => r.subject ?? r.patient;
const common: SearchParamDef[] = [
  token("_id", (r) => codeToken(r.id)),
  date("_lastUpdated", (r) => dates(dateOf(obj(r.meta)?.lastUpdated))),
];
const clinical = (statusSystem: string): SearchParamDef[] => [
  reference("patient", (r) => referenceValues(subjectOrPatient(r), "Patient")),
  reference("subject", (r) => referenceValues(subjectOrPatient(r))),
  reference("encounter", (r) => referenceValues(r.encounter)),
  token("status", (r) => codeToken(r.status, statusSystem)),
  token("identifier", (r) => identifierTokens(r.identifier)),
];

const HL7 = "http://hl7.org/fhir/";
const byType: Record<string, SearchParamDef[]> = {
  Patient: [
    ...common,
    token("identifier", (r) => identifierTokens(r.identifier)),
    string("name", (r) => humanNameParts(r.name, "all")),
    string("family", (r) => humanNameParts(r.name, "family")),
    string("given", (r) => humanNameParts(r.name, "given")),
    date("birthdate", (r) => dates(dateOf(r.birthDate))),
    token("gender", (r) => codeToken(r.gender, HL7 + "administrative-gender")),
    string("address", (r) => addressParts(r.address)),
    string("address-city", (r) => addressParts(r.address, "city")),
    string("address-state", (r) => addressParts(r.address, "state")),
    string("address-postalcode", (r) => addressParts(r.address, "postalCode")),
    string("address-country", (r) => addressParts(r.address, "country")),
    token("telecom", (r) => telecomTokens(r.telecom)),
    token("phone", (r) => telecomTokens(r.telecom, "phone")),
    token("email", (r) => telecomTokens(r.telecom, "email")),
    reference("general-practitioner", (r) => referenceValues(r.generalPractitioner)),
  ],
  Observation: [
    ...common,
    ...clinical(HL7 + "observation-status"),
    token("code", (r) => conceptTokens(r.code)),
    token("category", (r) => conceptTokens(r.category)),
    date("date", (r) => dates(dateOf(r.effectiveDateTime), dateOf(r.effectiveInstant), periodOf(r.effectivePeriod))),
    quantity("value-quantity", (r) => quantityOf(r.valueQuantity)),
    token("value-concept", (r) => conceptTokens(r.valueCodeableConcept)),
    string("value-string", (r) => (typeof r.valueString === "string" ? [r.valueString] : [])),
    token("interpretation", (r) => conceptTokens(r.interpretation)),
  ],
  Condition: [
    ...common,
    ...clinical(HL7 + "condition-status"),
    token("code", (r) => conceptTokens(r.code)),
    token("category", (r) => conceptTokens(r.category)),
    token("clinical-status", (r) => conceptTokens(r.clinicalStatus)),
    token("verification-status", (r) => conceptTokens(r.verificationStatus)),
    date("onset-date", (r) => dates(dateOf(r.onsetDateTime), periodOf(r.onsetPeriod))),
    date("recorded-date", (r) => dates(dateOf(r.recordedDate))),
    date("abatement-date", (r) => dates(dateOf(r.abatementDateTime), periodOf(r.abatementPeriod))),
  ],
  MedicationRequest: [
    ...common,
    ...clinical(HL7 + "CodeSystem/medicationrequest-status"),
    token("code", (r) => conceptTokens(r.medicationCodeableConcept)),
    token("intent", (r) => codeToken(r.intent, HL7 + "CodeSystem/medicationrequest-intent")),
    token("category", (r) => conceptTokens(r.category)),
    date("authoredon", (r) => dates(dateOf(r.authoredOn))),
    date("date", (r) => {
      const out: DateRange[] = [];
      for (const d of list(r.dosageInstruction)) for (const e of list(obj(obj(d)?.timing)?.event)) {
        const range = dateOf(e);
        if (range) out.push(range);
      }
      return out;
    }),
    reference("requester", (r) => referenceValues(r.requester)),
  ],
  Procedure: [
    ...common,
    ...clinical(HL7 + "event-status"),
    token("code", (r) => conceptTokens(r.code)),
    token("category", (r) => conceptTokens(r.category)),
    date("date", (r) => dates(dateOf(r.performedDateTime), periodOf(r.performedPeriod))),
  ],
  ServiceRequest: [
    ...common,
    ...clinical(HL7 + "request-status"),
    token("code", (r) => conceptTokens(r.code)),
    token("intent", (r) => codeToken(r.intent, HL7 + "request-intent")),
    token("category", (r) => conceptTokens(r.category)),
    date("authored", (r) => dates(dateOf(r.authoredOn))),
    date("occurrence", (r) => dates(dateOf(r.occurrenceDateTime), periodOf(r.occurrencePeriod))),
    reference("requester", (r) => referenceValues(r.requester)),
  ],
};

/** Types outside the six get a generic set read from the usual element names. */
const generic: SearchParamDef[] = [
  ...common,
  reference("patient", (r) => referenceValues(subjectOrPatient(r), "Patient")),
  reference("subject", (r) => referenceValues(subjectOrPatient(r))),
  token("identifier", (r) => identifierTokens(r.identifier)),
  token("code", (r) => conceptTokens(r.code)),
  token("category", (r) => conceptTokens(r.category)),
  token("status", (r) => codeToken(r.status)),
];

const cache = new Map<string, Map<string, SearchParamDef>>();

/** Search parameters of `type`, by name. */
export function searchParams(type: string): Map<string, SearchParamDef> {
  let m = cache.get(type);
  if (!m) {
    m = new Map((byType[type] ?? generic).map((d) => [d.name, d]));
    cache.set(type, m);
  }
  return m;
}

export const CORE_TYPES = Object.keys(byType);

/** Lower-case, accent-free form used by string search. */
export function normalizeString(s: string): string {
  return s.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
}
