// Demographics shaped like the real server's Patient resources (patients_real.ndjson).
import { Faker, base, en } from "@faker-js/faker";
import type { FhirResource } from "../fhir/index.ts";
import { Rng } from "../util/index.ts";

export interface Demographics {
  mrn: string;
  gender: "male" | "female";
  birthDate: string;
}

const RACES: [code: string, display: string, weight: number][] = [
  ["2106-3", "White", 46],
  ["2131-1", "Other", 23],
  ["2028-9", "Asian", 19],
  ["2054-5", "Black or African American", 7],
  ["2076-8", "Native Hawaiian or Other Pacific Islander", 3],
  ["UNK", "Unknown", 1.5],
  ["1002-5", "American Indian or Alaska Native", 0.5],
];
const ETHNICITIES: [code: string, display: string, weight: number][] = [
  ["2186-5", "Non-Hispanic", 77],
  ["2135-2", "Hispanic or Latino", 21],
  ["UNK", "Unknown", 2],
];

function weighted<T extends [string, string, number]>(rng: Rng, items: T[]): T {
  const total = items.reduce((s, i) => s + i[2], 0);
  let r = rng.float() * total;
  for (const item of items) {
    r -= item[2];
    if (r < 0) return item;
  }
  return items[items.length - 1]!;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}

/** `count` Patient resources (meta included), with some same-family/same-birth-year pairs. */
export function generatePatients(seed: number, count: number): FhirResource[] {
  const rng = Rng.derive(seed, "patients");
  const faker = new Faker({ locale: [en, base] });
  faker.seed(Rng.derive(seed, "faker").next32());
  const used = new Set<string>();
  const out: FhirResource[] = [];
  let lastUpdated = Date.parse("2024-12-30T19:05:44.779Z");
  for (let i = 0; i < count; i++) {
    let mrn: string;
    do mrn = `S${rng.digits(7)}`;
    while (used.has(mrn));
    used.add(mrn);
    const gender = rng.chance(0.5) ? "male" : "female";
    let family = faker.person.lastName();
    const given = faker.person.firstName(gender);
    let year = rng.chance(0.86) ? rng.int(1930, 1975) : rng.int(1976, 2003);
    // Near-collisions: same family name and birth year as an earlier patient.
    if (i > 0 && rng.chance(0.12)) {
      const twin = out[rng.int(0, i - 1)]!;
      family = (twin.name as { family: string }[])[0]!.family;
      year = Number((twin.birthDate as string).slice(0, 4));
    }
    const month = rng.int(1, 12);
    const day = rng.int(1, [31, year % 4 === 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!);
    const race = weighted(rng, RACES);
    const ethnicity = weighted(rng, ETHNICITIES);
    lastUpdated += rng.int(1, 28);
    out.push({
      resourceType: "Patient",
      id: mrn,
      meta: { versionId: "1", lastUpdated: `${new Date(lastUpdated).toISOString().slice(0, 23)}+00:00`, source: `#${rng.alnum(16)}` },
      extension: [
        {
          url: "http://hl7.org/fhir/us/core/StructureDefinition/us-core-race",
          valueCodeableConcept: { coding: [{ system: "http://hl7.org/fhir/v3/Race", code: race[0], display: race[1] }] },
        },
        {
          url: "http://hl7.org/fhir/us/core/StructureDefinition/us-core-ethnicity",
          valueCodeableConcept: { coding: [{ system: "http://hl7.org/fhir/v3/Ethnicity", code: ethnicity[0], display: ethnicity[1] }] },
        },
      ],
      identifier: [
        {
          use: "usual",
          type: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/v2-0203", code: "MR", display: "Medical Record Number" }] },
          value: mrn,
        },
      ],
      name: [{ use: "official", family, given: [given] }],
      telecom: [{ system: "phone", value: `${rng.digits(3)}-${rng.digits(3)}-${rng.digits(4)}`, use: "home" }],
      gender,
      birthDate: `${year}-${pad(month, 2)}-${pad(day, 2)}`,
      address: [
        {
          line: [faker.location.streetAddress(rng.chance(0.15))],
          city: faker.location.city(),
          state: faker.location.state({ abbreviated: true }),
          postalCode: faker.location.zipCode("#####"),
        },
      ],
    });
  }
  return out;
}

export function demographicsOf(patient: FhirResource): Demographics {
  const gender = patient.gender === "female" ? "female" : "male";
  const birthDate = typeof patient.birthDate === "string" && /^\d{4}-\d\d-\d\d$/.test(patient.birthDate) ? patient.birthDate : "1960-01-01";
  return { mrn: String(patient.id), gender, birthDate };
}
