/**
 * HTML built from template literals with escaping by default: every interpolated value is
 * escaped unless it is already `Html` (the result of another `html` template). There is no
 * way to interpolate an unescaped string except `trustedHtml`, used only for markup we
 * generate ourselves (the QR code SVG).
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type Slot = Html | string | number | bigint | boolean | null | undefined | readonly Slot[];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

function render(value: Slot): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false || value === true) return '';
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Slot[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i] as Slot) + (strings[i + 1] ?? '');
  return new Html(out);
}

/** Markup produced by our own code from safe inputs; never pass user input. */
export function trustedHtml(text: string): Html {
  return new Html(text);
}
