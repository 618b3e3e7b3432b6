/**
 * One CSV cell: quoted when needed, and a text cell that a spreadsheet would run as a formula
 * (=, +, -, @, tab, CR first) is prefixed with a quote.
 */
export function csvCell(value: string | null, kind: 'text' | 'number' = 'text'): string {
  if (value === null) return '';
  const safe = kind === 'text' && /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
