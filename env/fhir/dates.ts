// FHIR date/dateTime/instant values as inclusive millisecond ranges, and the date search prefixes.
// A value without a time zone is taken as UTC. Precision sets the range: "2023" is the whole year,
// "2023-11-12" the whole day, "2023-11-12T10:15:00+00:00" one second.

export interface DateRange {
  lo: number;
  hi: number;
}

export const DATE_PREFIXES = ["eq", "ne", "gt", "lt", "ge", "le", "sa", "eb", "ap"] as const;
export type DatePrefix = (typeof DATE_PREFIXES)[number];

const DATE_RE =
  /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+\- ]\d{2}:?\d{2})?)?)?)?$/;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** The range a FHIR date-like string covers, or undefined when it is not a valid date. */
export function parseDateRange(value: string): DateRange | undefined {
  const m = DATE_RE.exec(value);
  if (!m) return undefined;
  const year = Number(m[1]);
  if (m[2] === undefined) return { lo: Date.UTC(year, 0, 1), hi: Date.UTC(year + 1, 0, 1) - 1 };
  const month = Number(m[2]);
  if (month < 1 || month > 12) return undefined;
  if (m[3] === undefined) return { lo: Date.UTC(year, month - 1, 1), hi: Date.UTC(year, month, 1) - 1 };
  const day = Number(m[3]);
  if (day < 1 || day > daysInMonth(year, month)) return undefined;
  if (m[4] === undefined) {
    const lo = Date.UTC(year, month - 1, day);
    return { lo, hi: lo + 86_400_000 - 1 };
  }
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = m[6] === undefined ? 0 : Number(m[6]);
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMs = 0;
  const tz = m[8];
  if (tz !== undefined && tz !== "Z") {
    const digits = tz.slice(1).replace(":", "");
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2));
    if (oh > 14 || om > 59) return undefined;
    offsetMs = (oh * 60 + om) * 60_000 * (tz[0] === "-" ? -1 : 1);
  }
  const fraction = m[7];
  const ms = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, "0"));
  const lo = Date.UTC(year, month - 1, day, hour, minute, second, ms) - offsetMs;
  let span: number;
  if (m[6] === undefined) span = 60_000;
  else if (fraction === undefined) span = 1000;
  else span = fraction.length >= 3 ? 1 : 10 ** (3 - fraction.length);
  return { lo, hi: lo + span - 1 };
}

/** Split "ge2023-11-12" into prefix and value; a value without prefix means eq. */
export function splitPrefix(raw: string): { prefix: string; value: string } {
  const m = /^([a-z]{2})(.*)$/.exec(raw);
  if (m) return { prefix: m[1]!, value: m[2]! };
  return { prefix: "eq", value: raw };
}

export function isDatePrefix(p: string): p is DatePrefix {
  return (DATE_PREFIXES as readonly string[]).includes(p);
}

/** Does a target range satisfy `prefix` against the search range (FHIR R4 semantics, HAPI bounds)? */
export function matchDate(prefix: DatePrefix, target: DateRange, search: DateRange, now = Date.now()): boolean {
  switch (prefix) {
    case "eq":
      return target.lo >= search.lo && target.hi <= search.hi;
    case "ne":
      return !(target.lo >= search.lo && target.hi <= search.hi);
    case "gt":
      return target.hi > search.hi;
    case "lt":
      return target.lo < search.lo;
    case "ge":
      return target.hi >= search.lo;
    case "le":
      return target.lo <= search.hi;
    case "sa":
      return target.lo > search.hi;
    case "eb":
      return target.hi < search.lo;
    case "ap": {
      // within 10% of the distance between the value and now, on either side
      const slack = Math.abs(now - search.lo) * 0.1;
      return target.lo <= search.hi + slack && target.hi >= search.lo - slack;
    }
  }
}
