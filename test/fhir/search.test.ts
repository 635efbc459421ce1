import { describe, expect, it } from "vitest";
import { FhirError } from "../../env/fhir/index.ts";
import { buildFixtureStore, ids } from "./fixture.ts";

const store = buildFixtureStore();
const obsIds = (q: string) => ids(store, "Observation", q);
const patIds = (q: string) => ids(store, "Patient", q);

function searchError(type: string, q: string): FhirError {
  try {
    store.search(type, q);
  } catch (e) {
    if (e instanceof FhirError) return e;
    throw e;
  }
  throw new Error(`no error for ${type}?${q}`);
}

describe("token parameters", () => {
  it("matches a code in any system, system|code, |code and system|", () => {
    expect(obsIds("code=K")).toEqual(["101", "102", "104", "105", "106"]);
    expect(obsIds("code=http://loinc.org|K")).toEqual(["101", "102", "104", "105", "106"]);
    expect(obsIds("code=http://snomed.info/sct|K")).toEqual([]);
    expect(obsIds("code=|K")).toEqual([]);
    expect(obsIds("code=http://loinc.org|")).toHaveLength(7);
    expect(ids(store, "Observation", "interpretation=|H")).toEqual(["107"]);
  });
  it("ORs comma-separated values and ignores code.text", () => {
    expect(obsIds("code=A1C,GLU")).toEqual(["103", "107"]);
    expect(obsIds("code=K-text")).toEqual([]);
  });
  it("supports :not, _id and identifier", () => {
    expect(obsIds("code:not=K")).toEqual(["103", "107"]);
    expect(obsIds("_id=105,101")).toEqual(["101", "105"]);
    expect(patIds("identifier=S1000003")).toEqual(["S1000003"]);
    expect(patIds("identifier=urn:mrn|S1000001")).toEqual(["S1000001"]);
    expect(patIds("identifier=urn:mrn|S1000002")).toEqual([]);
    expect(patIds("gender=female")).toEqual(["S1000002", "S1000003"]);
    expect(obsIds("status=final&category=laboratory&code=GLU")).toEqual(["107"]);
  });
});

describe("reference parameters", () => {
  it("resolves S123, Patient/S123 and a full URL alike, for patient and subject", () => {
    const expected = ["101", "102", "103", "105", "106"];
    expect(obsIds("patient=S1000001")).toEqual(expected);
    expect(obsIds("patient=Patient/S1000001")).toEqual(expected);
    expect(obsIds("patient=http://localhost:8080/fhir/Patient/S1000001")).toEqual(expected);
    expect(obsIds("subject=Patient/S1000001")).toEqual(expected);
    expect(obsIds("subject=S1000001&code=A1C")).toEqual(["103"]);
    expect(obsIds("patient=S1000001&code=K")).toEqual(["101", "102", "105", "106"]);
    expect(obsIds("patient=S1000001&code=http://loinc.org|K")).toEqual(["101", "102", "105", "106"]);
    expect(obsIds("patient=S1000001&code=http://other|K")).toEqual([]);
    expect(obsIds("patient=S9999999")).toEqual([]);
    expect(store.byPatient("Observation", "S1000002").map((r) => r.id)).toEqual(["104"]);
    expect(ids(store, "Condition", "patient=S1000001&category=problem-list-item")).toEqual(["201"]);
  });
});

describe("string parameters", () => {
  it("starts-with, case- and accent-insensitive, on any name part", () => {
    expect(patIds("name=gar")).toEqual(["S1000001", "S1000002"]);
    expect(patIds("family=garcia")).toEqual(["S1000001"]);
    expect(patIds("given=jose")).toEqual(["S1000001"]);
    expect(patIds("given=luis")).toEqual(["S1000001"]);
    expect(patIds("name=jo")).toEqual(["S1000001", "S1000003"]);
    expect(patIds("given=arc")).toEqual([]);
  });
  it("supports :exact and :contains", () => {
    expect(patIds("family:exact=García")).toEqual(["S1000001"]);
    expect(patIds("family:exact=garcía")).toEqual([]);
    expect(patIds("family:contains=RCI")).toEqual(["S1000001"]);
    expect(patIds("name:contains=mit")).toEqual(["S1000003"]);
  });
  it("combines name and birthdate", () => {
    expect(patIds("family=Garner&given=Ann&birthdate=1950-03-06")).toEqual(["S1000002"]);
    expect(patIds("family=Garcia&birthdate=1950-03-06")).toEqual([]);
  });
});

describe("date parameters", () => {
  it("eq on a day means the whole day, in UTC, honouring offsets of the data", () => {
    // 105 is 2023-11-12T21:00Z; 104 is the last second of the 12th
    expect(obsIds("date=2023-11-12")).toEqual(["101", "104", "105", "107"]);
    expect(obsIds("date=eq2023-11-12")).toEqual(["101", "104", "105", "107"]);
    expect(obsIds("date=2023-11")).toEqual(["101", "103", "104", "105", "107"]);
    expect(obsIds("date=2021")).toEqual(["102"]);
  });
  it("handles every prefix", () => {
    expect(obsIds("code=K&date=gt2023-11-12")).toEqual([]);
    expect(obsIds("code=K&date=ge2023-11-12")).toEqual(["101", "104", "105"]);
    expect(obsIds("code=K&date=lt2023-11-12")).toEqual(["102", "106"]);
    expect(obsIds("code=K&date=le2023-11-12")).toEqual(["101", "102", "104", "105", "106"]);
    expect(obsIds("code=K&date=ne2023-11-12")).toEqual(["102", "106"]);
    expect(obsIds("code=K&date=sa2022-06-01")).toEqual(["101", "104", "105"]);
    expect(obsIds("code=K&date=eb2022-06-01")).toEqual(["102"]);
    expect(obsIds("code=K&date=ap2023-11-12")).toEqual(["101", "104", "105"]);
  });
  it("takes instants with time zones and ANDs repeated parameters", () => {
    expect(obsIds("date=ge2023-11-12T10:15:00%2B00:00&date=lt2023-11-12T21:00:00Z")).toEqual(["101"]);
    expect(obsIds("date=gt2023-11-12T10:15:00Z")).toEqual(["103", "104", "105"]);
    expect(obsIds("date=2023-11-12T15:15:00%2B05:00")).toEqual(["101"]);
    expect(obsIds("date=2022-06-01T16:00:00Z")).toEqual(["106"]);
    expect(obsIds("patient=S1000001&code=K&date=ge2022-01-01&date=le2023-11-12")).toEqual(["101", "105", "106"]);
  });
  it("searches Patient birthdate at the precision of the data", () => {
    expect(patIds("birthdate=1987-11")).toEqual(["S1000003"]);
    expect(patIds("birthdate=1987-11-20")).toEqual([]);
    expect(patIds("birthdate=ge1987-11-20")).toEqual(["S1000003"]);
    expect(patIds("birthdate=lt1950-03-06")).toEqual(["S1000001"]);
    expect(ids(store, "Condition", "onset-date=2015")).toEqual(["201"]);
  });
  it("rejects bad dates and prefixes with 400", () => {
    for (const q of ["date=2023-13-01", "date=2023-11-31", "date=le2023-11-13GET", "date=xx2023-01-01", "date=yesterday"]) {
      const e = searchError("Observation", q);
      expect(e.status, q).toBe(400);
    }
    expect(searchError("Observation", "date=xx2023-01-01").diagnostics).toContain('prefix "xx"');
    expect(searchError("Observation", "date=2023-13-01").diagnostics).toBe('Invalid date/time format: "2023-13-01"');
  });
});

describe("quantity parameters", () => {
  it("compares values with prefixes and the precision of the query", () => {
    expect(obsIds("value-quantity=gt5.4")).toEqual(["104", "106", "107"]);
    expect(obsIds("value-quantity=5")).toEqual(["103"]);
    expect(obsIds("value-quantity=le4.0|http://unitsofmeasure.org|mmol/L")).toEqual(["101", "102"]);
    expect(obsIds("value-quantity=le4.0||mg")).toEqual([]);
  });
});

describe("result parameters", () => {
  it("sorts by date both ways, ties and missing values keep id order", () => {
    expect(obsIds("patient=S1000001&code=K&_sort=date")).toEqual(["102", "106", "101", "105"]);
    expect(obsIds("patient=S1000001&code=K&_sort=-date")).toEqual(["105", "101", "106", "102"]);
    expect(obsIds("patient=S1000001&code=K&_sort=-date&_count=1")).toEqual(["105"]);
    expect(patIds("_sort=birthdate")).toEqual(["S1000001", "S1000002", "S1000003"]);
    expect(patIds("_sort=-birthdate")).toEqual(["S1000003", "S1000002", "S1000001"]);
    expect(patIds("_sort=family,given")).toEqual(["S1000001", "S1000002", "S1000003"]);
    expect(obsIds("_sort=-_lastUpdated&_count=2")).toEqual(["107", "106"]);
  });
  it("counts totals beyond the page and validates _count", () => {
    expect(store.search("Observation", "code=K&_count=2")).toMatchObject({ total: 5 });
    expect(store.search("Observation", "code=K&_count=0").resources).toEqual([]);
    for (const q of ["_count=51", "_count=-1", "_count=abc", "_count=1.5"]) expect(searchError("Observation", q).status, q).toBe(400);
  });
  it("names the valid parameters when one is unknown", () => {
    const e = searchError("Observation", "foo=1");
    expect(e.status).toBe(400);
    expect(e.diagnostics).toMatch(/^Unknown search parameter "foo" for resource type "Observation"\. Valid search parameters for this search are: \[_id, _lastUpdated, category, code, date, .*\]$/);
    expect(searchError("Patient", "_sort=foo").status).toBe(400);
    expect(searchError("Patient", "name:fuzzy=x").status).toBe(400);
  });
  it("ignores _format, _pretty and empty values", () => {
    expect(obsIds("code=A1C&_format=json&_pretty=true&date=")).toEqual(["103"]);
  });
});
