// The patients tasks are generated on: MRN listing, hold-out, patient-disjoint splits, demographics.
import type { FhirReader, FhirResource } from "../../fhir/index.ts";
import { hash32 } from "../../util/index.ts";

export type Split = "train" | "val" | "test";
export const SPLITS: readonly Split[] = ["train", "val", "test"];

/** Every Patient id of the reader (search without paging: up to the server's max count). */
export function patientMrns(reader: FhirReader): string[] {
  return reader
    .search("Patient", "")
    .resources.map((p) => p.id)
    .filter((id): id is string => typeof id === "string");
}

/** The split a patient belongs to: a hash of the MRN alone, so splits stay disjoint across seeds and runs. */
export function splitOf(mrn: string, fractions: readonly [number, number, number]): Split {
  const total = fractions[0] + fractions[1] + fractions[2];
  const u = hash32(`split:${mrn}`) / 4294967296;
  if (u < fractions[0] / total) return "train";
  if (u < (fractions[0] + fractions[1]) / total) return "val";
  return "test";
}

export interface Demographics {
  mrn: string;
  given: string;
  family: string;
  birthDate: string;
}

export function demographics(reader: FhirReader, mrn: string): Demographics | undefined {
  const p: FhirResource | undefined = reader.read("Patient", mrn);
  if (!p) return undefined;
  const names = Array.isArray(p.name) ? (p.name as { given?: unknown; family?: unknown }[]) : [];
  const name = names[0];
  const given = Array.isArray(name?.given) && typeof name.given[0] === "string" ? name.given[0] : undefined;
  const family = typeof name?.family === "string" ? name.family : undefined;
  const birthDate = typeof p.birthDate === "string" ? p.birthDate : undefined;
  if (!given || !family || !birthDate) return undefined;
  return { mrn, given, family, birthDate };
}
