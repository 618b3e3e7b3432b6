/** Timestamps are epoch milliseconds inside the service and RFC 3339 UTC with ms on the wire. */

export const MS_PER_DAY = 86_400_000;

/** The UTC day of a timestamp, as days since 1970-01-01: what SQL's `created_at / 86400000` gives. */
export function utcDay(epochMs: number): number {
  return Math.floor(epochMs / MS_PER_DAY);
}
/** 10000-01-01T00:00:00.000Z: from there on toISOString writes an expanded year (+010000-…). */
const YEAR_10000 = 253_402_300_800_000;

/**
 * The same text as `new Date(epochMs).toISOString()`, written with integer arithmetic: about a
 * quarter of its cost (0.6 against 2.2 µs measured), and every order in a response carries two
 * timestamps and each event one, so a page of 100 orders spent 0.44 ms in Date alone.
 * Outside years 1970–9999 (never an order's time) it falls back to Date.
 */
export function formatTimestamp(epochMs: number): string {
  if (!(epochMs >= 0 && epochMs < YEAR_10000) || !Number.isInteger(epochMs)) return new Date(epochMs).toISOString();
  const days = Math.floor(epochMs / MS_PER_DAY);
  const { year, month, day } = civilFromDays(days);
  let rest = epochMs - days * MS_PER_DAY;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  const millis = rest - seconds * 1000;
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(hours, 2)}:${pad(minutes, 2)}:${pad(seconds, 2)}.${pad(millis, 3)}Z`;
}

/** The proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's civil_from_days). */
function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719_468; // days since 0000-03-01, the start of a 400-year era
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  return { year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * A time as people read it on the dashboard, in its messages and in its mails ("29 Nov 2026,
 * 07:07 UTC"); formatTimestamp is for machines (the API, CSV files, datetime attributes).
 */
export function readableTime(epochMs: number, seconds = false): string {
  const d = new Date(epochMs);
  const clock = `${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}${seconds ? `:${pad(d.getUTCSeconds(), 2)}` : ''}`;
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${clock} UTC`;
}
