// Small clinical-data helpers over FHIR JSON as the server returned it.
import type { FhirResource } from "../../env/fhir/index.ts";

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** An ISO date/dateTime as epoch ms (no offset = UTC). NaN when unparsable. */
export function instant(value: unknown): number {
  if (typeof value !== "string") return NaN;
  const s = /T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(value) ? `${value}Z` : value;
  return Date.parse(s);
}

/** Ascending id order (numeric ids compare as numbers), the order the graders scan in. */
export function byId(resources: FhirResource[]): FhirResource[] {
  const key = (r: FhirResource) => (/^\d+$/.test(r.id ?? "") ? Number(r.id) : Number.POSITIVE_INFINITY);
  return [...resources].sort((a, b) => key(a) - key(b) || String(a.id).localeCompare(String(b.id)));
}

/** "latest": scan in id order, replace only when strictly later (ties keep the first). */
export function latest<T>(items: T[], time: (item: T) => number): T | undefined {
  let best: T | undefined;
  let bestT = Number.NEGATIVE_INFINITY;
  for (const item of items) {
    const t = time(item);
    if (Number.isNaN(t)) continue;
    if (best === undefined || t > bestT) {
      best = item;
      bestT = t;
    }
  }
  return best;
}

export const effective = (r: FhirResource): number => instant(r.effectiveDateTime);

export function value(r: FhirResource): number | undefined {
  const v = (r.valueQuantity as { value?: unknown } | undefined)?.value;
  return typeof v === "number" ? v : undefined;
}

/** Performed time of a Procedure: performedDateTime, else performedPeriod.end, else .start (as written). */
export function performedText(r: FhirResource): string | undefined {
  if (typeof r.performedDateTime === "string") return r.performedDateTime;
  const p = r.performedPeriod as { start?: unknown; end?: unknown } | undefined;
  if (typeof p?.end === "string") return p.end;
  if (typeof p?.start === "string") return p.start;
  return undefined;
}

/** The human text of a MedicationRequest's medication (text, else codings' displays), lower-cased. */
export function medicationText(r: FhirResource): string {
  const mcc = r.medicationCodeableConcept as { text?: unknown; coding?: { display?: unknown }[] } | undefined;
  if (typeof mcc?.text === "string") return mcc.text.toLowerCase();
  return (mcc?.coding ?? []).map((c) => (typeof c.display === "string" ? c.display : "")).join(" ").toLowerCase();
}

export const patientRef = (mrn: string) => ({ reference: `Patient/${mrn}` });

/** Whole years between a birth date and `now` (month/day comparison as the graders do). */
export function ageOn(birthDate: string, now: string): number {
  const [by, bm, bd] = birthDate.split("-").map(Number) as [number, number, number];
  const [ny, nm, nd] = now.slice(0, 10).split("-").map(Number) as [number, number, number];
  let age = ny - by;
  if (nm < bm || (nm === bm && nd < bd)) age -= 1;
  return age;
}

/** Same instant one calendar year earlier (2023-11-13T10:15:00+00:00 -> 2022-11-13T10:15:00+00:00). */
export function yearBefore(now: string): number {
  const d = new Date(instant(now));
  d.setUTCFullYear(d.getUTCFullYear() - 1);
  return d.getTime();
}

/** The calendar date (YYYY-MM-DD as written) of a timestamp, as epoch ms of that UTC date. */
export function dateOnly(value: string): number {
  return Date.parse(`${value.slice(0, 10)}T00:00:00Z`);
}
