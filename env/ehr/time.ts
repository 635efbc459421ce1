// Instants are epoch milliseconds (UTC) inside the generator; text uses "+00:00" offsets like the
// real server. No locale or local-timezone dependent formatting.

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export function at(iso: string): number {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new Error(`not an ISO instant: ${iso}`);
  return ms;
}

/** The clocks the data is built around (GRADERS.md; v2 per-type defaults). */
export const CLOCK = {
  v1: at("2023-11-13T10:15:00+00:00"),
  v2: at("2023-11-07T22:47:00+00:00"),
  v2Catheter: at("2023-11-11T09:00:00+00:00"),
  v2Flu: at("2024-01-09T00:00:00+00:00"),
  v2Covid: at("2023-11-07T12:00:00+00:00"),
} as const;

/** Nothing generated is dated after this instant. */
export const LATEST = CLOCK.v1;

// Formatting is on the hot path (two or three instants per resource): day prefixes are cached
// and the time of day comes from a table, which is exact for whole-minute instants.
const dayPrefix = new Map<number, string>();
const MINUTE_OF_DAY: string[] = [];
for (let m = 0; m < 1440; m++) MINUTE_OF_DAY.push(`${String(Math.floor(m / 60)).padStart(2, "0")}:${String(m % 60).padStart(2, "0")}:00+00:00`);

/** "2023-11-13T10:15:00+00:00" (seconds precision). */
export function iso(ms: number): string {
  if (ms % MINUTE === 0) {
    const day = Math.floor(ms / DAY);
    let prefix = dayPrefix.get(day);
    if (prefix === undefined) dayPrefix.set(day, (prefix = new Date(day * DAY).toISOString().slice(0, 11)));
    return prefix + MINUTE_OF_DAY[(ms - day * DAY) / MINUTE]!;
  }
  return `${new Date(ms).toISOString().slice(0, 19)}+00:00`;
}

const MILLIS: string[] = [];
for (let i = 0; i < 1000; i++) MILLIS.push(`${String(i).padStart(3, "0")}+00:00`);
let secondKey = NaN;
let secondPrefix = "";

/** "2024-12-30T19:05:44.779+00:00" (milliseconds, as in meta.lastUpdated). */
export function isoMillis(ms: number): string {
  const sec = Math.floor(ms / 1000);
  if (sec !== secondKey) {
    secondKey = sec;
    secondPrefix = new Date(sec * 1000).toISOString().slice(0, 20);
  }
  return secondPrefix + MILLIS[ms - sec * 1000]!;
}

/** "1953-02-28" */
export function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Round down to whole minutes (observations are charted to the minute). */
export function toMinute(ms: number): number {
  return ms - (((ms % MINUTE) + MINUTE) % MINUTE);
}
