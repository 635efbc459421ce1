// FHIR date/dateTime/instant values as inclusive millisecond ranges, and the date search prefixes.
// A value without a time zone is taken as UTC. Precision sets the range: "2023" is the whole year,
// "2023-11-12" the whole day, "2023-11-12T10:15:00+00:00" one second. (Index sidecars store these
// ranges: a change here needs a bump of INDEX_VERSION in ndjson-index.ts.)

export interface DateRange {
  lo: number;
  hi: number;
}

export const DATE_PREFIXES = ["eq", "ne", "gt", "lt", "ge", "le", "sa", "eb", "ap"] as const;
export type DatePrefix = (typeof DATE_PREFIXES)[number];

const DATE_RE =
  /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+\- ]\d{2}:?\d{2})?)?)?)?$/;

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
function daysInMonth(year: number, month: number): number {
  if (month === 2 && (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0))) return 29;
  return DAYS[month - 1]!;
}

function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

/** Fast path for the usual "YYYY-MM-DDThh:mm:ss+00:00" / "...Z" form; undefined: use the regex. */
function parseCommonInstant(s: string): DateRange | undefined {
  const len = s.length;
  if (len < 20 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(10) !== 84 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return undefined;
  const year = digits(s, 0, 4), month = digits(s, 5, 2), day = digits(s, 8, 2);
  const hour = digits(s, 11, 2), minute = digits(s, 14, 2), second = digits(s, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return undefined;
  let at = 19;
  let ms = 0;
  let span = 1000;
  if (s.charCodeAt(at) === 46) {
    ms = digits(s, 20, 3);
    if (ms < 0) return undefined;
    at = 23;
    span = 1;
  }
  let offset = 0;
  if (len === at + 6) {
    const sign = s.charCodeAt(at);
    const oh = digits(s, at + 1, 2), om = digits(s, at + 4, 2);
    if ((sign !== 43 && sign !== 45) || s.charCodeAt(at + 3) !== 58 || oh < 0 || oh > 14 || om < 0 || om > 59) return undefined;
    offset = (oh * 60 + om) * 60_000 * (sign === 45 ? -1 : 1);
  } else if (len !== at + 1 || s.charCodeAt(at) !== 90) return undefined;
  const lo = Date.UTC(year, month - 1, day, hour, minute, second, ms) - offset;
  return { lo, hi: lo + span - 1 };
}

/** The range a FHIR date-like string covers, or undefined when it is not a valid date. */
export function parseDateRange(value: string): DateRange | undefined {
  const fast = parseCommonInstant(value);
  if (fast) return fast;
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
export function matchDate(prefix: DatePrefix, target: DateRange, search: DateRange, now?: number): boolean {
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
      const slack = Math.abs((now ?? Date.now()) - search.lo) * 0.1;
      return target.lo <= search.hi + slack && target.hi >= search.lo - slack;
    }
  }
}
