import { ApiError } from '../../domain/api-error.js';

/** Query parameters shared by the list endpoints (docs/api.md "Conventions", Lists), parsed after the schema's checks. */
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

export interface PageQuery {
  limit?: string;
  starting_after?: string;
  ending_before?: string;
}

/** `limit`: digits only (the schema checked that), 1–100, default 20. */
export function parseLimit(text: string | undefined): number {
  if (text === undefined) return DEFAULT_LIMIT;
  const value = /^[0-9]{1,4}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= 1 && value <= MAX_LIMIT)) {
    throw new ApiError('invalid_request', `limit must be an integer from 1 to ${MAX_LIMIT}.`, 'limit');
  }
  return value;
}

/** Stripe's rule: one cursor at a time. */
export function checkOneCursor(query: PageQuery): void {
  if (query.starting_after !== undefined && query.ending_before !== undefined) {
    throw new ApiError('invalid_request', 'Send starting_after or ending_before, not both.', 'ending_before');
  }
}

export function unknownCursor(param: 'starting_after' | 'ending_before', id: string, what: string): ApiError {
  return new ApiError('invalid_request', `${param} must be the id of ${what}; ${JSON.stringify(id.slice(0, 80))} is not one.`, param);
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/**
 * `created[gte]` / `created[lt]`: an RFC 3339 timestamp (any offset, up to nanoseconds) or
 * Unix seconds, as epoch milliseconds. A fraction below the millisecond rounds up: creation
 * times are whole milliseconds, so `t >= x` and `t < x` keep their meaning exactly.
 */
export function parseTimeParam(param: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const invalid = () => new ApiError('invalid_request', `${param} must be an RFC 3339 timestamp such as 2026-11-25T21:30:00Z, or Unix seconds.`, param);
  if (/^[0-9]{1,11}$/.test(text)) return Number(text) * 1000;
  const m = RFC3339.exec(text);
  if (!m) throw invalid();
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const base = Date.UTC(year, month - 1, day, hour, minute, second);
  const date = new Date(base);
  // Date.UTC rolls 2026-02-30 over into March: a real date round-trips unchanged.
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) {
    throw invalid();
  }
  const fraction = (m[7] ?? '').padEnd(9, '0');
  const nanos = Number(fraction);
  let ms = base + Math.ceil(nanos / 1_000_000);
  if (m[9]) {
    const offsetHours = Number(m[10]);
    const offsetMinutes = Number(m[11]);
    if (offsetHours > 23 || offsetMinutes > 59) throw invalid();
    const offset = (offsetHours * 60 + offsetMinutes) * 60_000;
    ms += m[9] === '+' ? -offset : offset;
  }
  return ms;
}
