/**
 * Statement months: calendar months in UTC, written YYYY-MM (docs/api.md "GET /statements/{month}").
 * Plain integer arithmetic on Date.UTC: no local time zone is involved.
 */
export interface Month {
  year: number;
  /** 1–12. */
  month: number;
}

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** `2026-11` → { year: 2026, month: 11 }; undefined for anything else (`2026-1`, `2026-13`, `0000-01`). */
export function parseMonth(text: string): Month | undefined {
  const match = MONTH.exec(text);
  if (!match) return undefined;
  const year = Number(match[1]);
  if (year < 1970) return undefined;
  return { year, month: Number(match[2]) };
}

export function formatMonth(m: Month): string {
  return `${String(m.year).padStart(4, '0')}-${String(m.month).padStart(2, '0')}`;
}

/** The month's first millisecond (inclusive) and the next month's (exclusive). */
export function monthRange(m: Month): { from: number; to: number } {
  return { from: Date.UTC(m.year, m.month - 1, 1), to: Date.UTC(m.year, m.month, 1) };
}

export function monthOf(epochMs: number): Month {
  const date = new Date(epochMs);
  return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1 };
}

function nextMonth(m: Month): Month {
  return m.month === 12 ? { year: m.year + 1, month: 1 } : { year: m.year, month: m.month + 1 };
}

const index = (m: Month) => m.year * 12 + m.month - 1;

/** Every month from `first` to `last`, both included, oldest first. */
export function monthsBetween(first: Month, last: Month): Month[] {
  const months: Month[] = [];
  for (let m = first; index(m) <= index(last); m = nextMonth(m)) months.push(m);
  return months;
}

export function compareMonths(a: Month, b: Month): number {
  return index(a) - index(b);
}
