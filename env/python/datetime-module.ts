// Python's datetime module as an expression reaches it: date, datetime, time, timedelta and timezone
// (fixed offsets), their constructors, arithmetic, comparisons, attributes, methods, str() and repr().
// The clock (today(), now(), utcnow()) is the caller's: the wall clock, or a fixed instant read as UTC.
import { floatRatio } from "./decimal.ts";
import { intFloorDiv, intMod, intTrueDiv } from "./arith.ts";
import { type Kwargs, type NativeFn, type Val, PyBuiltin, PyModule, PyObj, PyType, NamedTuple, repr, typeOf } from "./objects.ts";
import { PyError } from "./values.ts";

const MAXORDINAL = 3_652_059;
const US_PER_DAY = 86_400_000_000n;
const MAX_DAYS = 999_999_999n;

// ---- calendar ----

const isLeap = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
const DIM = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const daysInMonth = (y: number, m: number) => (m === 2 && isLeap(y) ? 29 : DIM[m]!);
const daysBeforeYear = (y: number) => {
  const p = y - 1;
  return p * 365 + Math.floor(p / 4) - Math.floor(p / 100) + Math.floor(p / 400);
};
const daysBeforeMonth = (y: number, m: number) => {
  let n = 0;
  for (let i = 1; i < m; i++) n += DIM[i]!;
  return m > 2 && isLeap(y) ? n + 1 : n;
};
export const toOrdinal = (y: number, m: number, d: number) => daysBeforeYear(y) + daysBeforeMonth(y, m) + d;

export function fromOrdinal(n: number): [number, number, number] {
  // Years of 400-year cycles, then 100-, 4- and 1-year ones (the proleptic Gregorian calendar).
  let k = n - 1;
  const n400 = Math.floor(k / 146_097);
  k -= n400 * 146_097;
  const n100 = Math.floor(k / 36_524);
  k -= n100 * 36_524;
  const n4 = Math.floor(k / 1461);
  k -= n4 * 1461;
  const n1 = Math.floor(k / 365);
  k -= n1 * 365;
  const y = n400 * 400 + n100 * 100 + n4 * 4 + n1 + 1;
  if (n1 === 4 || n100 === 4) return [y - 1, 12, 31];
  const leap = isLeap(y);
  let m = 1;
  for (;;) {
    const dim = m === 2 && leap ? 29 : DIM[m]!;
    if (k < dim) break;
    k -= dim;
    m++;
  }
  return [y, m, k + 1];
}

const pad = (n: number | bigint, w: number) => String(n).padStart(w, "0");

// ---- argument parsing ----

export function bindArgs(fname: string, names: string[], args: Val[], kw: Kwargs, required: number): (Val | undefined)[] {
  if (args.length > names.length) {
    throw new PyError("TypeError", `${fname}() takes at most ${names.length} argument${names.length === 1 ? "" : "s"} (${args.length} given)`);
  }
  const out: (Val | undefined)[] = [...args];
  for (const [k, v] of kw) {
    const i = names.indexOf(k);
    if (i < 0) throw new PyError("TypeError", `'${k}' is an invalid keyword argument for ${fname}()`);
    if (out[i] !== undefined) throw new PyError("TypeError", `argument for ${fname}() given by name ('${k}') and position (${i + 1})`);
    out[i] = v;
  }
  for (let i = 0; i < required; i++) {
    if (out[i] === undefined) throw new PyError("TypeError", `${fname}() missing required argument '${names[i]}' (pos ${i + 1})`);
  }
  return out;
}

/** A C int argument: int or bool only, within C's int range. */
function cInt(v: Val | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v !== "bigint") throw new PyError("TypeError", `'${typeOf(v)}' object cannot be interpreted as an integer`);
  if (v > 2147483647n || v < -2147483648n) throw new PyError("OverflowError", `signed integer is ${v > 0n ? "greater than maximum" : "less than minimum"}`);
  return Number(v);
}

function checkDate(y: number, m: number, d: number): void {
  if (y < 1 || y > 9999) throw new PyError("ValueError", `year ${y} is out of range`);
  if (m < 1 || m > 12) throw new PyError("ValueError", "month must be in 1..12");
  if (d < 1 || d > daysInMonth(y, m)) throw new PyError("ValueError", "day is out of range for month");
}
function checkTime(h: number, mi: number, s: number, us: number, fold: number): void {
  if (h < 0 || h > 23) throw new PyError("ValueError", "hour must be in 0..23");
  if (mi < 0 || mi > 59) throw new PyError("ValueError", "minute must be in 0..59");
  if (s < 0 || s > 59) throw new PyError("ValueError", "second must be in 0..59");
  if (us < 0 || us > 999999) throw new PyError("ValueError", "microsecond must be in 0..999999");
  if (fold !== 0 && fold !== 1) throw new PyError("ValueError", "fold must be either 0 or 1");
}
function tzArg(v: Val | undefined): Timezone | null {
  if (v === undefined || v === null) return null;
  if (!(v instanceof Timezone)) throw new PyError("TypeError", `tzinfo argument must be None or of a tzinfo subclass, not type '${typeOf(v)}'`);
  return v;
}

// ---- timedelta ----

export class Timedelta extends PyObj {
  readonly us: bigint;
  constructor(us: bigint) {
    super();
    const days = intFloorDiv(us, US_PER_DAY);
    if (days > MAX_DAYS || days < -MAX_DAYS) throw new PyError("OverflowError", `days=${days}; must have magnitude <= 999999999`);
    this.us = us;
  }
  get days(): bigint {
    return intFloorDiv(this.us, US_PER_DAY);
  }
  get seconds(): bigint {
    return intMod(this.us, US_PER_DAY) / 1_000_000n;
  }
  get microseconds(): bigint {
    return intMod(this.us, 1_000_000n);
  }
  get typeName() {
    return "datetime.timedelta";
  }
  repr(): string {
    const parts: string[] = [];
    if (this.days) parts.push(`days=${this.days}`);
    if (this.seconds) parts.push(`seconds=${this.seconds}`);
    if (this.microseconds) parts.push(`microseconds=${this.microseconds}`);
    return `datetime.timedelta(${parts.length ? parts.join(", ") : "0"})`;
  }
  override str(): string {
    const d = this.days;
    const s = Number(this.seconds);
    const us = this.microseconds;
    let out = `${Math.floor(s / 3600)}:${pad(Math.floor(s / 60) % 60, 2)}:${pad(s % 60, 2)}`;
    if (us) out += `.${pad(us, 6)}`;
    if (d) out = `${d} day${d === 1n || d === -1n ? "" : "s"}, ${out}`;
    return out;
  }
  override truthy() {
    return this.us !== 0n;
  }
  override eq(o: Val) {
    return o instanceof Timedelta ? o.us === this.us : false;
  }
  override cmp(o: Val) {
    return o instanceof Timedelta ? (this.us < o.us ? -1 : this.us > o.us ? 1 : 0) : undefined;
  }
  override hashKey() {
    return `td:${this.us}`;
  }
  override getattr(name: string): Val | undefined {
    switch (name) {
      case "days":
        return this.days;
      case "seconds":
        return this.seconds;
      case "microseconds":
        return this.microseconds;
      case "total_seconds":
        return method("total_seconds", this, () => intTrueDiv(this.us, 1_000_000n));
    }
    return TIMEDELTA_TYPE.getattr(name);
  }
}

function method(name: string, self: Val, fn: NativeFn): PyBuiltin {
  return new PyBuiltin(name, fn, self);
}
function noArgs(name: string, self: Val, fn: () => Val): PyBuiltin {
  return method(name, self, (args, kw) => {
    if (args.length || kw.size) throw new PyError("TypeError", `${name}() takes no arguments (${args.length + kw.size} given)`);
    return fn();
  });
}

const TD_UNITS: [string, bigint][] = [
  ["microseconds", 1n],
  ["milliseconds", 1000n],
  ["seconds", 1_000_000n],
  ["minutes", 60_000_000n],
  ["hours", 3_600_000_000n],
  ["days", US_PER_DAY],
  ["weeks", 7n * US_PER_DAY],
];

/** timedelta(...) as CPython sums its components: ints exactly, floats' fractions gathered and rounded half-even once. */
function makeTimedelta(args: Val[], kw: Kwargs): Timedelta {
  const names = ["days", "seconds", "microseconds", "milliseconds", "minutes", "hours", "weeks"];
  const bound = bindArgs("timedelta", names, args, kw, 0);
  const given = new Map(names.map((n, i) => [n, bound[i]]));
  let sum = 0n;
  let leftover = 0;
  for (const [unit, factor] of TD_UNITS) {
    const v = given.get(unit);
    if (v === undefined) continue;
    if (typeof v === "bigint" || typeof v === "boolean") sum += (typeof v === "boolean" ? (v ? 1n : 0n) : v) * factor;
    else if (typeof v === "number") {
      const ip = Math.trunc(v);
      if (!Number.isFinite(v)) throw new PyError(Number.isNaN(v) ? "ValueError" : "OverflowError", Number.isNaN(v) ? "cannot convert float NaN to integer" : "cannot convert float infinity to integer");
      sum += BigInt(ip) * factor;
      const frac = v - ip;
      if (frac === 0) continue;
      const scaled = Number(factor) * frac;
      const ip2 = Math.trunc(scaled);
      sum += BigInt(ip2);
      leftover += scaled - ip2;
    } else throw new PyError("TypeError", `unsupported type for timedelta ${unit} component: ${typeOf(v)}`);
  }
  if (leftover !== 0) {
    let whole = Math.sign(leftover) * Math.round(Math.abs(leftover)); // C round(): halves away from zero
    if (Math.abs(whole - leftover) === 0.5) {
      const odd = Number(intMod(sum, 2n));
      whole = 2 * (Math.sign((leftover + odd) * 0.5) * Math.round(Math.abs((leftover + odd) * 0.5))) - odd;
    }
    sum += BigInt(whole);
  }
  return new Timedelta(sum);
}

/** round(a / b) with halves to even, for ints (CPython's divide_nearest). */
function divideNearest(a: bigint, b: bigint): bigint {
  if (b === 0n) throw new PyError("ZeroDivisionError", "division by zero");
  const q = intFloorDiv(a, b);
  const r = a - q * b;
  const twice = 2n * r;
  const bb = b < 0n ? -b : b;
  const tr = b < 0n ? -twice : twice;
  if (tr > bb || (tr === bb && (q & 1n) === 1n)) return q + 1n;
  return q;
}

export function timedeltaMul(td: Timedelta, k: Val): Val | undefined {
  if (typeof k === "bigint" || typeof k === "boolean") return new Timedelta(td.us * (typeof k === "boolean" ? (k ? 1n : 0n) : k));
  if (typeof k === "number") {
    if (!Number.isFinite(k)) throw new PyError(Number.isNaN(k) ? "ValueError" : "OverflowError", "cannot convert float to integer ratio");
    const [n, d] = floatRatio(Math.abs(k));
    return new Timedelta(divideNearest(td.us * (k < 0 ? -n : n), d));
  }
  return undefined;
}

export function timedeltaDiv(td: Timedelta, k: Val, floor: boolean): Val | undefined {
  if (k instanceof Timedelta) {
    if (k.us === 0n) throw new PyError("ZeroDivisionError", floor ? "integer division or modulo by zero" : "division by zero");
    return floor ? intFloorDiv(td.us, k.us) : intTrueDiv(td.us, k.us);
  }
  if (typeof k === "bigint" || typeof k === "boolean") {
    const n = typeof k === "boolean" ? (k ? 1n : 0n) : k;
    if (n === 0n) throw new PyError("ZeroDivisionError", floor ? "integer division or modulo by zero" : "division by zero");
    return new Timedelta(floor ? intFloorDiv(td.us, n) : divideNearest(td.us, n));
  }
  if (typeof k === "number" && !floor) {
    if (!Number.isFinite(k)) throw new PyError(Number.isNaN(k) ? "ValueError" : "OverflowError", "cannot convert float to integer ratio");
    const [n, d] = floatRatio(Math.abs(k));
    if (n === 0n) throw new PyError("ZeroDivisionError", "division by zero");
    return new Timedelta(divideNearest(td.us * d, k < 0 ? -n : n));
  }
  return undefined;
}

// ---- timezone ----

export class Timezone extends PyObj {
  constructor(
    readonly offsetUs: bigint,
    readonly name: string | null = null,
  ) {
    super();
  }
  get typeName() {
    return "datetime.timezone";
  }
  get isUtc(): boolean {
    return this.offsetUs === 0n && this.name === null;
  }
  repr(): string {
    if (this === UTC) return "datetime.timezone.utc";
    const td = new Timedelta(this.offsetUs).repr();
    return this.name === null ? `datetime.timezone(${td})` : `datetime.timezone(${td}, ${repr(this.name)})`;
  }
  override str(): string {
    return this.tzname();
  }
  tzname(): string {
    if (this.name !== null) return this.name;
    if (this.offsetUs === 0n) return "UTC";
    return `UTC${offsetText(this.offsetUs, ":")}`;
  }
  override eq(o: Val) {
    return o instanceof Timezone ? o.offsetUs === this.offsetUs : false;
  }
  override hashKey() {
    return `tz:${this.offsetUs}`;
  }
  override getattr(name: string): Val | undefined {
    switch (name) {
      case "utcoffset":
        return method(name, this, () => new Timedelta(this.offsetUs));
      case "tzname":
        return method(name, this, () => this.tzname());
      case "dst":
        return method(name, this, () => null);
    }
    return TIMEZONE_TYPE.getattr(name);
  }
}

function offsetText(us: bigint, sep: string): string {
  const sign = us < 0n ? "-" : "+";
  let a = us < 0n ? -us : us;
  const h = a / 3_600_000_000n;
  a -= h * 3_600_000_000n;
  const m = a / 60_000_000n;
  a -= m * 60_000_000n;
  const s = a / 1_000_000n;
  const f = a % 1_000_000n;
  let out = `${sign}${pad(h, 2)}${sep}${pad(m, 2)}`;
  if (s || f) out += `${sep}${pad(s, 2)}`;
  if (f) out += `.${pad(f, 6)}`;
  return out;
}

export const UTC = new Timezone(0n);

function makeTimezone(args: Val[], kw: Kwargs): Timezone {
  const [off, name] = bindArgs("timezone", ["offset", "name"], args, kw, 1);
  if (!(off instanceof Timedelta)) throw new PyError("TypeError", `timezone() argument 1 must be datetime.timedelta, not ${typeOf(off!)}`);
  if (name !== undefined && typeof name !== "string") throw new PyError("TypeError", `timezone() argument 2 must be str, not ${typeOf(name)}`);
  if (off.us <= -US_PER_DAY || off.us >= US_PER_DAY) {
    throw new PyError("ValueError", "offset must be a timedelta strictly between -timedelta(hours=24) and timedelta(hours=24).");
  }
  if (off.us === 0n && name === undefined) return UTC;
  return new Timezone(off.us, name ?? null);
}

// ---- date, datetime, time ----

export class PyDate extends PyObj {
  constructor(
    readonly y: number,
    readonly m: number,
    readonly d: number,
  ) {
    super();
  }
  get typeName() {
    return "datetime.date";
  }
  get ordinal(): number {
    return toOrdinal(this.y, this.m, this.d);
  }
  isoDate(): string {
    return `${pad(this.y, 4)}-${pad(this.m, 2)}-${pad(this.d, 2)}`;
  }
  repr(): string {
    return `datetime.date(${this.y}, ${this.m}, ${this.d})`;
  }
  override str(): string {
    return this.isoDate();
  }
  override eq(o: Val): boolean | undefined {
    if (o instanceof PyDatetime) return false;
    return o instanceof PyDate ? o.ordinal === this.ordinal : false;
  }
  override cmp(o: Val): number | undefined {
    if (!(o instanceof PyDate) || o instanceof PyDatetime) {
      if (o instanceof PyDatetime) throw new PyError("TypeError", "can't compare datetime.datetime to datetime.date");
      return undefined;
    }
    return Math.sign(this.ordinal - o.ordinal);
  }
  override hashKey() {
    return `date:${this.ordinal}`;
  }
  dateAttr(name: string): Val | undefined {
    switch (name) {
      case "year":
        return BigInt(this.y);
      case "month":
        return BigInt(this.m);
      case "day":
        return BigInt(this.d);
      case "weekday":
        return noArgs(name, this, () => BigInt((this.ordinal + 6) % 7));
      case "isoweekday":
        return noArgs(name, this, () => BigInt(((this.ordinal + 6) % 7) + 1));
      case "toordinal":
        return noArgs(name, this, () => BigInt(this.ordinal));
      case "isocalendar":
        return noArgs(name, this, () => {
          const [y, w, d] = isoCalendar(this.y, this.m, this.d);
          return new NamedTuple("datetime.IsoCalendarDate", ["year", "week", "weekday"], [BigInt(y), BigInt(w), BigInt(d)]);
        });
      case "ctime":
        return noArgs(name, this, () => ctime(this));
      case "timetuple":
        return noArgs(name, this, () => {
          throw NO_IMPORT();
        });
      case "strftime":
        return method(name, this, (args, kw) => {
          const [fmt] = bindArgs("strftime", ["format"], args, kw, 1);
          if (typeof fmt !== "string") throw new PyError("TypeError", `strftime() argument 1 must be str, not ${typeOf(fmt!)}`);
          throw NO_IMPORT();
        });
    }
    return undefined;
  }
  override getattr(name: string): Val | undefined {
    switch (name) {
      case "isoformat":
        return noArgs(name, this, () => this.isoDate());
      case "replace":
        return method(name, this, (args, kw) => {
          const [y, m, d] = bindArgs("replace", ["year", "month", "day"], args, kw, 0);
          return makeDate(cInt(y, this.y), cInt(m, this.m), cInt(d, this.d));
        });
    }
    return this.dateAttr(name) ?? DATE_TYPE.getattr(name);
  }
}

function makeDate(y: number, m: number, d: number): PyDate {
  checkDate(y, m, d);
  return new PyDate(y, m, d);
}

function dateFromOrdinal(n: number): PyDate {
  if (n < 1 || n > MAXORDINAL) throw new PyError("OverflowError", "date value out of range");
  const [y, m, d] = fromOrdinal(n);
  return new PyDate(y, m, d);
}

function isoCalendar(y: number, m: number, d: number): [number, number, number] {
  const week1 = (year: number) => {
    const first = toOrdinal(year, 1, 1);
    const wd = (first + 6) % 7;
    let monday = first - wd;
    if (wd > 3) monday += 7;
    return monday;
  };
  const ord = toOrdinal(y, m, d);
  let year = y;
  let start = week1(year);
  if (ord < start) start = week1(--year);
  else if (ord >= week1(year + 1)) start = week1(++year);
  const week = Math.floor((ord - start) / 7) + 1;
  return [year, week, ((ord + 6) % 7) + 1];
}

export class PyTime extends PyObj {
  constructor(
    readonly h: number,
    readonly mi: number,
    readonly s: number,
    readonly us: number,
    readonly tz: Timezone | null,
    readonly fold = 0,
  ) {
    super();
  }
  get typeName() {
    return "datetime.time";
  }
  iso(timespec = "auto"): string {
    return timeText(this.h, this.mi, this.s, this.us, timespec) + (this.tz ? offsetText(this.tz.offsetUs, ":") : "");
  }
  repr(): string {
    let out = `datetime.time(${this.h}, ${this.mi}`;
    if (this.s || this.us) out += `, ${this.s}`;
    if (this.us) out += `, ${this.us}`;
    if (this.tz) out += `, tzinfo=${this.tz.repr()}`;
    if (this.fold) out += ", fold=1";
    return out + ")";
  }
  override str() {
    return this.iso();
  }
  get dayUs(): bigint {
    return BigInt(((this.h * 60 + this.mi) * 60 + this.s) * 1_000_000 + this.us);
  }
  override truthy() {
    return true;
  }
  override eq(o: Val) {
    if (!(o instanceof PyTime)) return false;
    if (!this.tz !== !o.tz) return false;
    return this.dayUs - (this.tz?.offsetUs ?? 0n) === o.dayUs - (o.tz?.offsetUs ?? 0n);
  }
  override cmp(o: Val) {
    if (!(o instanceof PyTime)) return undefined;
    if (!this.tz !== !o.tz) throw new PyError("TypeError", "can't compare offset-naive and offset-aware times");
    const a = this.dayUs - (this.tz?.offsetUs ?? 0n);
    const b = o.dayUs - (o.tz?.offsetUs ?? 0n);
    return a < b ? -1 : a > b ? 1 : 0;
  }
  override hashKey() {
    return `time:${this.dayUs - (this.tz?.offsetUs ?? 0n)}:${!!this.tz}`;
  }
  override getattr(name: string): Val | undefined {
    const clock = clockAttr(this, name);
    if (clock !== undefined) return clock;
    switch (name) {
      case "isoformat":
        return method(name, this, (args, kw) => {
          const [ts] = bindArgs("isoformat", ["timespec"], args, kw, 0);
          return this.iso(timespecArg(ts));
        });
      case "strftime":
        return method(name, this, (args, kw) => {
          const [fmt] = bindArgs("strftime", ["format"], args, kw, 1);
          if (typeof fmt !== "string") throw new PyError("TypeError", `strftime() argument 1 must be str, not ${typeOf(fmt!)}`);
          throw NO_IMPORT();
        });
    }
    return TIME_TYPE.getattr(name);
  }
}

/** The attributes time and datetime share: the clock fields and the fixed-offset zone's answers
 * (a `timezone`'s dst() is None, as CPython's). */
function clockAttr(t: PyTime | PyDatetime, name: string): Val | undefined {
  switch (name) {
    case "hour":
      return BigInt(t.h);
    case "minute":
      return BigInt(t.mi);
    case "second":
      return BigInt(t.s);
    case "microsecond":
      return BigInt(t.us);
    case "tzinfo":
      return t.tz;
    case "fold":
      return BigInt(t.fold);
    case "utcoffset":
      return noArgs(name, t, () => (t.tz ? new Timedelta(t.tz.offsetUs) : null));
    case "tzname":
      return noArgs(name, t, () => (t.tz ? t.tz.tzname() : null));
    case "dst":
      return noArgs(name, t, () => null);
  }
  return undefined;
}

function timespecArg(v: Val | undefined): string {
  if (v === undefined) return "auto";
  if (typeof v !== "string") throw new PyError("TypeError", `isoformat() argument 'timespec' must be str, not ${typeOf(v)}`);
  return v;
}

function timeText(h: number, mi: number, s: number, us: number, timespec: string): string {
  const hh = pad(h, 2);
  switch (timespec === "auto" ? (us ? "microseconds" : "seconds") : timespec) {
    case "hours":
      return hh;
    case "minutes":
      return `${hh}:${pad(mi, 2)}`;
    case "seconds":
      return `${hh}:${pad(mi, 2)}:${pad(s, 2)}`;
    case "milliseconds":
      return `${hh}:${pad(mi, 2)}:${pad(s, 2)}.${pad(Math.floor(us / 1000), 3)}`;
    case "microseconds":
      return `${hh}:${pad(mi, 2)}:${pad(s, 2)}.${pad(us, 6)}`;
  }
  throw new PyError("ValueError", "Unknown timespec value");
}

export class PyDatetime extends PyDate {
  constructor(
    y: number,
    m: number,
    d: number,
    readonly h: number,
    readonly mi: number,
    readonly s: number,
    readonly us: number,
    readonly tz: Timezone | null,
    readonly fold = 0,
  ) {
    super(y, m, d);
  }
  override get typeName() {
    return "datetime.datetime";
  }
  /** Microseconds since 0001-01-01T00:00 of the wall time. */
  get wallUs(): bigint {
    return BigInt(this.ordinal - 1) * US_PER_DAY + BigInt(((this.h * 60 + this.mi) * 60 + this.s) * 1_000_000 + this.us);
  }
  /** The instant in UTC (aware only). */
  get utcUs(): bigint {
    return this.wallUs - (this.tz?.offsetUs ?? 0n);
  }
  iso(sep = "T", timespec = "auto"): string {
    return `${this.isoDate()}${sep}${timeText(this.h, this.mi, this.s, this.us, timespec)}${this.tz ? offsetText(this.tz.offsetUs, ":") : ""}`;
  }
  override repr(): string {
    let out = `datetime.datetime(${this.y}, ${this.m}, ${this.d}, ${this.h}, ${this.mi}`;
    if (this.s || this.us) out += `, ${this.s}`;
    if (this.us) out += `, ${this.us}`;
    if (this.fold) out += ", fold=1";
    if (this.tz) out += `, tzinfo=${this.tz.repr()}`;
    return out + ")";
  }
  override str(): string {
    return this.iso(" ");
  }
  override eq(o: Val): boolean | undefined {
    if (!(o instanceof PyDatetime)) return false;
    if (!this.tz !== !o.tz) return false;
    return this.utcUs === o.utcUs;
  }
  override cmp(o: Val): number | undefined {
    if (!(o instanceof PyDate)) return undefined;
    if (!(o instanceof PyDatetime)) throw new PyError("TypeError", "can't compare datetime.datetime to datetime.date");
    if (!this.tz !== !o.tz) throw new PyError("TypeError", "can't compare offset-naive and offset-aware datetimes");
    const a = this.utcUs;
    const b = o.utcUs;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  override hashKey() {
    return `dt:${this.utcUs}:${!!this.tz}`;
  }
  override getattr(name: string): Val | undefined {
    const clock = clockAttr(this, name);
    if (clock !== undefined) return clock;
    switch (name) {
      case "date":
        return noArgs(name, this, () => new PyDate(this.y, this.m, this.d));
      case "time":
        return noArgs(name, this, () => new PyTime(this.h, this.mi, this.s, this.us, null, this.fold));
      case "timetz":
        return noArgs(name, this, () => new PyTime(this.h, this.mi, this.s, this.us, this.tz, this.fold));
      case "isoformat":
        return method(name, this, (args, kw) => {
          const [sep, ts] = bindArgs("isoformat", ["sep", "timespec"], args, kw, 0);
          if (sep !== undefined && (typeof sep !== "string" || [...sep].length !== 1)) {
            throw new PyError("TypeError", "isoformat() argument 1 must be a unicode character");
          }
          return this.iso(sep ?? "T", timespecArg(ts));
        });
      case "timestamp":
        return noArgs(name, this, () => intTrueDiv(this.tz ? this.utcUs - EPOCH_US : localToUtc(this.wallUs) - EPOCH_US, 1_000_000n));
      case "replace":
        return method(name, this, (args, kw) => {
          const names = ["year", "month", "day", "hour", "minute", "second", "microsecond", "tzinfo", "fold"];
          const v = bindArgs("replace", names, args, kw, 0);
          const tz = v[7] === undefined ? this.tz : tzArg(v[7]);
          return makeDatetime(cInt(v[0], this.y), cInt(v[1], this.m), cInt(v[2], this.d), cInt(v[3], this.h), cInt(v[4], this.mi), cInt(v[5], this.s), cInt(v[6], this.us), tz, cInt(v[8], this.fold));
        });
      case "astimezone":
        return method(name, this, (args, kw) => {
          const [tzv] = bindArgs("astimezone", ["tz"], args, kw, 0);
          const tz = tzArg(tzv) ?? localZoneAt(this.tz ? this.utcUs : localToUtc(this.wallUs));
          const utc = this.tz ? this.utcUs : localToUtc(this.wallUs);
          return datetimeFromWallUs(utc + tz.offsetUs, tz);
        });
    }
    return this.dateAttr(name) ?? DATETIME_TYPE.getattr(name);
  }
}

function makeDatetime(y: number, m: number, d: number, h: number, mi: number, s: number, us: number, tz: Timezone | null, fold = 0): PyDatetime {
  checkDate(y, m, d);
  checkTime(h, mi, s, us, fold);
  return new PyDatetime(y, m, d, h, mi, s, us, tz, fold);
}

function datetimeFromWallUs(wall: bigint, tz: Timezone | null): PyDatetime {
  const days = intFloorDiv(wall, US_PER_DAY);
  if (days < 0n || days >= BigInt(MAXORDINAL)) throw new PyError("OverflowError", "date value out of range");
  let rest = Number(wall - days * US_PER_DAY);
  const [y, m, d] = fromOrdinal(Number(days) + 1);
  const us = rest % 1_000_000;
  rest = (rest - us) / 1_000_000;
  return new PyDatetime(y, m, d, Math.floor(rest / 3600), Math.floor(rest / 60) % 60, rest % 60, us, tz);
}

// ---- arithmetic ----

export function dateAdd(a: Val, b: Val): Val | undefined {
  if (b instanceof Timedelta) {
    if (a instanceof PyDatetime) return datetimeFromWallUs(a.wallUs + b.us, a.tz);
    if (a instanceof PyDate) {
      const n = BigInt(a.ordinal) + b.days;
      if (n < 1n || n > BigInt(MAXORDINAL)) throw new PyError("OverflowError", "date value out of range");
      return dateFromOrdinal(Number(n));
    }
    if (a instanceof Timedelta) return new Timedelta(a.us + b.us);
  }
  if (a instanceof Timedelta && b instanceof PyDate) return dateAdd(b, a);
  return undefined;
}

export function dateSub(a: Val, b: Val): Val | undefined {
  if (b instanceof Timedelta) {
    if (a instanceof Timedelta) return new Timedelta(a.us - b.us);
    if (a instanceof PyDatetime) return dateAdd(a, new Timedelta(-b.us));
    // date - timedelta subtracts the timedelta's days only (CPython negates .days, not the timedelta).
    if (a instanceof PyDate) return dateAdd(a, new Timedelta(-b.days * US_PER_DAY));
  }
  if (a instanceof PyDatetime && b instanceof PyDatetime) {
    if (!a.tz !== !b.tz) throw new PyError("TypeError", "can't subtract offset-naive and offset-aware datetimes");
    return new Timedelta(a.utcUs - b.utcUs);
  }
  if (a instanceof PyDate && b instanceof PyDate && !(a instanceof PyDatetime) && !(b instanceof PyDatetime)) {
    return new Timedelta(BigInt(a.ordinal - b.ordinal) * US_PER_DAY);
  }
  return undefined;
}

// ---- the clock ----

/** Where "now" comes from: the wall clock in the process's zone, or one fixed instant read as UTC. */
export interface Clock {
  /** Microseconds since the Unix epoch. */
  nowUs(): bigint;
  /** The local zone's offset (microseconds) at a UTC instant given in microseconds since 0001-01-01. */
  offsetAt(utcUs: bigint): bigint;
}

const EPOCH_US = BigInt(toOrdinal(1970, 1, 1) - 1) * US_PER_DAY;

export const WALL_CLOCK: Clock = {
  nowUs: () => BigInt(Date.now()) * 1000n + BigInt(Math.floor((performance.now() % 1) * 1000)),
  offsetAt(utcUs) {
    const ms = Number((utcUs - EPOCH_US) / 1000n);
    const off = new Date(ms).getTimezoneOffset();
    return Number.isNaN(off) ? 0n : BigInt(-off) * 60_000_000n;
  },
};

export function fixedClock(iso: string): Clock {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new Error(`not a time: ${iso}`);
  return { nowUs: () => BigInt(ms) * 1000n, offsetAt: () => 0n };
}

let clock: Clock = WALL_CLOCK;
/** Runs `f` with `c` as the module's clock. */
export function withClock<T>(c: Clock, f: () => T): T {
  const prev = clock;
  clock = c;
  try {
    return f();
  } finally {
    clock = prev;
  }
}

function localZoneAt(utcUs: bigint): Timezone {
  const off = clock.offsetAt(utcUs);
  return new Timezone(off, clock === WALL_CLOCK ? localName(utcUs) : "UTC");
}
function localName(utcUs: bigint): string {
  const ms = Number((utcUs - EPOCH_US) / 1000n);
  const part = new Intl.DateTimeFormat("en-US", { timeZoneName: "short" }).formatToParts(new Date(ms)).find((p) => p.type === "timeZoneName");
  return part?.value ?? "UTC";
}
/** mktime(): the UTC instant of a naive local wall time. */
function localToUtc(wallUs: bigint): bigint {
  let guess = wallUs - clock.offsetAt(wallUs);
  guess = wallUs - clock.offsetAt(guess);
  return guess;
}

function nowDatetime(tz: Timezone | null): PyDatetime {
  const utc = clock.nowUs() + EPOCH_US;
  if (tz) return datetimeFromWallUs(utc + tz.offsetUs, tz);
  return datetimeFromWallUs(utc + clock.offsetAt(utc), null);
}

function timestampArg(v: Val | undefined): bigint {
  if (typeof v === "bigint" || typeof v === "boolean") return (typeof v === "boolean" ? (v ? 1n : 0n) : v) * 1_000_000n;
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new PyError(Number.isNaN(v) ? "ValueError" : "OverflowError", "cannot convert float NaN to integer");
    // Round half even to microseconds, as CPython's _PyTime_ROUND_HALF_EVEN.
    const [n, d] = floatRatio(Math.abs(v));
    return divideNearest((v < 0 ? -n : n) * 1_000_000n, d);
  }
  throw new PyError("TypeError", `'${typeOf(v ?? null)}' object cannot be interpreted as an integer`);
}

// ---- strftime ----

/** strftime() imports `time` through the caller's builtins; the original's eval gives only `sum`, so it
 *  always fails with KeyError '__import__' there (and so here). ctime() formats without importing. */
const NO_IMPORT = () => new PyError("KeyError", "'__import__'");

const DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/** ctime(): "Mon Nov 13 10:15:00 2023" (CPython formats it itself). */
function ctime(dt: PyDate): string {
  const t = dt instanceof PyDatetime ? dt : null;
  const wd = (dt.ordinal + 6) % 7;
  return `${DAYS[wd]!.slice(0, 3)} ${MONTHS[dt.m - 1]!.slice(0, 3)} ${String(dt.d).padStart(2, " ")} ${pad(t?.h ?? 0, 2)}:${pad(t?.mi ?? 0, 2)}:${pad(t?.s ?? 0, 2)} ${pad(dt.y, 4)}`;
}

// ---- fromisoformat (3.11: the forms CPython accepts for date and datetime) ----

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$|^(\d{4})(\d{2})(\d{2})$|^(\d{4})-?W(\d{2})-?(\d)?$/;

function parseIsoDate(s: string): PyDate {
  const m = ISO_DATE.exec(s);
  if (!m) throw new PyError("ValueError", `Invalid isoformat string: ${repr(s)}`);
  if (m[7]) {
    const y = Number(m[7]);
    const w = Number(m[8]);
    const d = Number(m[9] ?? 1);
    if (w < 1 || w > 53 || d < 1 || d > 7) throw new PyError("ValueError", `Invalid isoformat string: ${repr(s)}`);
    const first = toOrdinal(y, 1, 1);
    const wd = (first + 6) % 7;
    let monday = first - wd;
    if (wd > 3) monday += 7;
    return dateFromOrdinal(monday + (w - 1) * 7 + d - 1);
  }
  const y = Number(m[1] ?? m[4]);
  const mo = Number(m[2] ?? m[5]);
  const d = Number(m[3] ?? m[6]);
  try {
    return makeDate(y, mo, d);
  } catch {
    throw new PyError("ValueError", `Invalid isoformat string: ${repr(s)}`);
  }
}

function parseIsoDatetime(s: string): PyDatetime {
  const bad = () => new PyError("ValueError", `Invalid isoformat string: ${repr(s)}`);
  const dm = /^(\d{4}-\d{2}-\d{2}|\d{8}|\d{4}-?W\d{2}(?:-?\d)?)/.exec(s);
  if (!dm) throw bad();
  const date = parseIsoDate(dm[1]!);
  const rest = s.slice(dm[0].length);
  if (rest === "") return new PyDatetime(date.y, date.m, date.d, 0, 0, 0, 0, null);
  const tm = /^.(\d{2})(?::?(\d{2})(?::?(\d{2})(?:[.,](\d{1,9}))?)?)?(?:(Z)|([+-])(\d{2})(?::?(\d{2})(?::?(\d{2})(?:[.,](\d{1,6}))?)?)?)?$/.exec(rest);
  if (!tm || /[\ud800-\udfff]/.test(rest[0]!)) throw bad();
  const h = Number(tm[1]);
  const mi = Number(tm[2] ?? 0);
  const sec = Number(tm[3] ?? 0);
  const us = tm[4] ? Number(tm[4].slice(0, 6).padEnd(6, "0")) : 0;
  let tz: Timezone | null = null;
  if (tm[5]) tz = UTC;
  else if (tm[6]) {
    const off = ((Number(tm[7]) * 60 + Number(tm[8] ?? 0)) * 60 + Number(tm[9] ?? 0)) * 1_000_000 + (tm[10] ? Number(tm[10].padEnd(6, "0")) : 0);
    if (off >= 86_400_000_000) throw bad();
    tz = off === 0 ? UTC : new Timezone(BigInt(tm[6] === "-" ? -off : off));
  }
  if (h === 24 && mi === 0 && sec === 0 && us === 0) {
    const next = dateAdd(new PyDatetime(date.y, date.m, date.d, 0, 0, 0, 0, tz), new Timedelta(US_PER_DAY));
    return next as PyDatetime;
  }
  try {
    return makeDatetime(date.y, date.m, date.d, h, mi, sec, us, tz);
  } catch {
    throw bad();
  }
}

function strArg(fname: string, v: Val | undefined): string {
  if (typeof v !== "string") throw new PyError("TypeError", `${fname}: argument must be str`);
  return v;
}

// ---- the types and the module ----

function classAttr(attrs: Record<string, () => Val>): (n: string) => Val | undefined {
  return (n) => (Object.hasOwn(attrs, n) ? attrs[n]!() : undefined);
}
const classMethod = (owner: () => PyType, name: string, fn: NativeFn) => () => new PyBuiltin(name, fn, owner());

export const TIMEDELTA_TYPE: PyType = new PyType(
  "datetime.timedelta",
  makeTimedelta,
  classAttr({
    min: () => new Timedelta(-MAX_DAYS * US_PER_DAY),
    max: () => new Timedelta(MAX_DAYS * US_PER_DAY + US_PER_DAY - 1n),
    resolution: () => new Timedelta(1n),
  }),
);

export const TIMEZONE_TYPE: PyType = new PyType(
  "datetime.timezone",
  makeTimezone,
  classAttr({
    utc: () => UTC,
    min: () => new Timezone(-(US_PER_DAY - 60_000_000n)),
    max: () => new Timezone(US_PER_DAY - 60_000_000n),
  }),
);

export const DATE_TYPE: PyType = new PyType(
  "datetime.date",
  (args, kw) => {
    const [y, m, d] = bindArgs("date", ["year", "month", "day"], args, kw, 3);
    return makeDate(cInt(y, 0), cInt(m, 0), cInt(d, 0));
  },
  classAttr({
    min: () => new PyDate(1, 1, 1),
    max: () => new PyDate(9999, 12, 31),
    resolution: () => new Timedelta(US_PER_DAY),
    today: classMethod(() => DATE_TYPE, "today", (args, kw) => {
      bindArgs("today", [], args, kw, 0);
      const n = nowDatetime(null);
      return new PyDate(n.y, n.m, n.d);
    }),
    fromordinal: classMethod(() => DATE_TYPE, "fromordinal", (args, kw) => {
      const [n] = bindArgs("fromordinal", ["ordinal"], args, kw, 1);
      const o = cInt(n, 0);
      if (o < 1 || o > MAXORDINAL) throw new PyError("ValueError", `ordinal must be in 1..${MAXORDINAL}`);
      return dateFromOrdinal(o);
    }),
    fromisoformat: classMethod(() => DATE_TYPE, "fromisoformat", (args, kw) => {
      const [s] = bindArgs("fromisoformat", ["date_string"], args, kw, 1);
      return parseIsoDate(strArg("fromisoformat", s));
    }),
    fromtimestamp: classMethod(() => DATE_TYPE, "fromtimestamp", (args, kw) => {
      const [t] = bindArgs("fromtimestamp", ["timestamp"], args, kw, 1);
      const utc = timestampArg(t) + EPOCH_US;
      const dt = datetimeFromWallUs(utc + clock.offsetAt(utc), null);
      return new PyDate(dt.y, dt.m, dt.d);
    }),
    fromisocalendar: classMethod(() => DATE_TYPE, "fromisocalendar", (args, kw) => {
      const [y, w, d] = bindArgs("fromisocalendar", ["year", "week", "day"], args, kw, 3);
      return parseIsoDate(`${pad(cInt(y, 0), 4)}-W${pad(cInt(w, 0), 2)}-${cInt(d, 0)}`);
    }),
  }),
);

export const DATETIME_TYPE: PyType = new PyType(
  "datetime.datetime",
  (args, kw) => {
    const names = ["year", "month", "day", "hour", "minute", "second", "microsecond", "tzinfo", "fold"];
    const v = bindArgs("datetime", names, args, kw, 3);
    return makeDatetime(cInt(v[0], 0), cInt(v[1], 0), cInt(v[2], 0), cInt(v[3], 0), cInt(v[4], 0), cInt(v[5], 0), cInt(v[6], 0), tzArg(v[7]), cInt(v[8], 0));
  },
  (n) =>
    classAttr({
      min: () => new PyDatetime(1, 1, 1, 0, 0, 0, 0, null),
      max: () => new PyDatetime(9999, 12, 31, 23, 59, 59, 999999, null),
      resolution: () => new Timedelta(1n),
      now: classMethod(() => DATETIME_TYPE, "now", (args, kw) => {
        const [tz] = bindArgs("now", ["tz"], args, kw, 0);
        return nowDatetime(tzArg(tz));
      }),
      today: classMethod(() => DATETIME_TYPE, "today", (args, kw) => {
        bindArgs("today", [], args, kw, 0);
        return nowDatetime(null);
      }),
      strptime: classMethod(() => DATETIME_TYPE, "strptime", (args, kw) => {
        bindArgs("strptime", ["date_string", "format"], args, kw, 2);
        throw NO_IMPORT();
      }),
      utcnow: classMethod(() => DATETIME_TYPE, "utcnow", (args, kw) => {
        bindArgs("utcnow", [], args, kw, 0);
        return datetimeFromWallUs(clock.nowUs() + EPOCH_US, null);
      }),
      fromisoformat: classMethod(() => DATETIME_TYPE, "fromisoformat", (args, kw) => {
        const [s] = bindArgs("fromisoformat", ["date_string"], args, kw, 1);
        return parseIsoDatetime(strArg("fromisoformat", s));
      }),
      fromtimestamp: classMethod(() => DATETIME_TYPE, "fromtimestamp", (args, kw) => {
        const [t, tzv] = bindArgs("fromtimestamp", ["timestamp", "tz"], args, kw, 1);
        const utc = timestampArg(t) + EPOCH_US;
        const tz = tzArg(tzv);
        return datetimeFromWallUs(utc + (tz ? tz.offsetUs : clock.offsetAt(utc)), tz);
      }),
      utcfromtimestamp: classMethod(() => DATETIME_TYPE, "utcfromtimestamp", (args, kw) => {
        const [t] = bindArgs("utcfromtimestamp", ["timestamp"], args, kw, 1);
        return datetimeFromWallUs(timestampArg(t) + EPOCH_US, null);
      }),
      fromordinal: classMethod(() => DATETIME_TYPE, "fromordinal", (args, kw) => {
        const [o] = bindArgs("fromordinal", ["ordinal"], args, kw, 1);
        const d = dateFromOrdinal(cInt(o, 0));
        return new PyDatetime(d.y, d.m, d.d, 0, 0, 0, 0, null);
      }),
      combine: classMethod(() => DATETIME_TYPE, "combine", (args, kw) => {
        const [d, t, tzv] = bindArgs("combine", ["date", "time", "tzinfo"], args, kw, 2);
        if (!(d instanceof PyDate)) throw new PyError("TypeError", `combine() argument 1 must be datetime.date, not ${typeOf(d!)}`);
        if (!(t instanceof PyTime)) throw new PyError("TypeError", `combine() argument 2 must be datetime.time, not ${typeOf(t!)}`);
        return new PyDatetime(d.y, d.m, d.d, t.h, t.mi, t.s, t.us, tzv === undefined ? t.tz : tzArg(tzv), t.fold);
      }),
    })(n) ?? DATE_TYPE.getattr(n),
);

export const TIME_TYPE: PyType = new PyType(
  "datetime.time",
  (args, kw) => {
    const v = bindArgs("time", ["hour", "minute", "second", "microsecond", "tzinfo", "fold"], args, kw, 0);
    const [h, mi, s, us, fold] = [cInt(v[0], 0), cInt(v[1], 0), cInt(v[2], 0), cInt(v[3], 0), cInt(v[5], 0)];
    checkTime(h, mi, s, us, fold);
    return new PyTime(h, mi, s, us, tzArg(v[4]), fold);
  },
  classAttr({
    min: () => new PyTime(0, 0, 0, 0, null),
    max: () => new PyTime(23, 59, 59, 999999, null),
    resolution: () => new Timedelta(1n),
  }),
);

export function datetimeModule(): PyModule {
  return new PyModule(
    "datetime",
    new Map<string, Val>([
      ["date", DATE_TYPE],
      ["datetime", DATETIME_TYPE],
      ["time", TIME_TYPE],
      ["timedelta", TIMEDELTA_TYPE],
      ["timezone", TIMEZONE_TYPE],
      ["MINYEAR", 1n],
      ["MAXYEAR", 9999n],
      ["UTC", UTC],
    ]),
    "<module 'datetime'>",
  );
}
