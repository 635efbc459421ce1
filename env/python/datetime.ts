// Python datetime.fromisoformat (3.11+) and aware/naive comparison semantics.
import { PyError } from "./values.ts";

export interface PyDatetime {
  /** Microseconds since the epoch of the instant (naive values are read as if UTC). */
  us: number;
  aware: boolean;
  /** The wall-clock calendar date as written (what .date() returns). */
  date: { y: number; m: number; d: number };
}

const DATE = /^(\d{4})-?(\d{2})-?(\d{2})/;
const TIME = /^(\d{2})(?::?(\d{2})(?::?(\d{2})(?:[.,](\d+))?)?)?/;
const TZ = /^(?:(Z)|([+-])(\d{2})(?::?(\d{2})(?::?(\d{2})(?:\.(\d{1,6}))?)?)?)$/;

function invalid(s: string): PyError {
  return new PyError("ValueError", `Invalid isoformat string: '${s}'`);
}

function daysInMonth(y: number, m: number): number {
  return new Date(Date.UTC(y, m, 0)).getUTCDate();
}

/** Parsed timestamps by their text: graders read the same resources' times in every episode of a task. */
const parsed = new Map<string, PyDatetime>();
const MAX_PARSED = 100_000;

/** datetime.fromisoformat(s): raises ValueError on anything Python rejects (common forms covered). Results are frozen (shared). */
export function fromIsoformat(s: string): PyDatetime {
  if (typeof s !== "string") throw new PyError("TypeError", "fromisoformat: argument must be str");
  let dt = parsed.get(s);
  if (dt === undefined) {
    dt = parseIsoformat(s);
    Object.freeze(dt.date);
    Object.freeze(dt);
    if (parsed.size >= MAX_PARSED) parsed.clear();
    parsed.set(s, dt);
  }
  return dt;
}

function parseIsoformat(s: string): PyDatetime {
  const dm = DATE.exec(s);
  if (!dm) throw invalid(s);
  const y = Number(dm[1]);
  const mo = Number(dm[2]);
  const d = Number(dm[3]);
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) throw invalid(s);
  let rest = s.slice(dm[0].length);
  let hh = 0;
  let mi = 0;
  let ss = 0;
  let us = 0;
  let aware = false;
  let offsetUs = 0;
  if (rest.length > 0) {
    rest = rest.slice(1); // any single separator character
    const tm = TIME.exec(rest);
    if (!tm) throw invalid(s);
    hh = Number(tm[1]);
    mi = Number(tm[2] ?? 0);
    ss = Number(tm[3] ?? 0);
    if (tm[4] !== undefined) us = Number(tm[4].slice(0, 6).padEnd(6, "0"));
    rest = rest.slice(tm[0].length);
    if (hh > 23 || mi > 59 || ss > 59) throw invalid(s);
    if (rest.length > 0) {
      const z = TZ.exec(rest);
      if (!z) throw invalid(s);
      aware = true;
      if (!z[1]) {
        const oh = Number(z[3]);
        const om = Number(z[4] ?? 0);
        const os = Number(z[5] ?? 0);
        if (oh > 23 || om > 59 || os > 59) throw invalid(s);
        const ofrac = z[6] ? Number(z[6].padEnd(6, "0")) : 0;
        offsetUs = (z[2] === "-" ? -1 : 1) * (((oh * 60 + om) * 60 + os) * 1_000_000 + ofrac);
      }
    }
  }
  const wall = new Date(Date.UTC(2000, 0, 1, hh, mi, ss));
  wall.setUTCFullYear(y, mo - 1, d); // Date.UTC maps years 0-99 to 19xx
  const wallUs = wall.getTime() * 1000 + us;
  return { us: wallUs - offsetUs, aware, date: { y, m: mo, d } };
}

function check(a: PyDatetime, b: PyDatetime): void {
  if (a.aware !== b.aware) throw new PyError("TypeError", "can't compare offset-naive and offset-aware datetimes");
}

/** a < b etc. with Python's rule that naive and aware never compare. */
export function dtCmp(a: PyDatetime, b: PyDatetime): number {
  check(a, b);
  return a.us < b.us ? -1 : a.us > b.us ? 1 : 0;
}

/** a - b in microseconds (TypeError when mixing naive and aware). */
export function dtDiffUs(a: PyDatetime, b: PyDatetime): number {
  if (a.aware !== b.aware) throw new PyError("TypeError", "can't subtract offset-naive and offset-aware datetimes");
  return a.us - b.us;
}

export function addUs(a: PyDatetime, deltaUs: number): PyDatetime {
  const t = new Date(Math.floor((a.us + deltaUs) / 1000));
  return { us: a.us + deltaUs, aware: a.aware, date: { y: t.getUTCFullYear(), m: t.getUTCMonth() + 1, d: t.getUTCDate() } };
}

/** (a.date() - b.date()).days: calendar dates as written, offsets ignored. */
export function dateDiffDays(a: PyDatetime, b: PyDatetime): number {
  const da = Date.UTC(a.date.y, a.date.m - 1, a.date.d);
  const db = Date.UTC(b.date.y, b.date.m - 1, b.date.d);
  return Math.round((da - db) / 86_400_000);
}

export const HOUR_US = 3_600_000_000;
export const DAY_US = 24 * HOUR_US;

/** timedelta(...).days for a difference in microseconds (floor). */
export function tdDays(us: number): number {
  return Math.floor(us / DAY_US);
}
