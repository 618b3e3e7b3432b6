/**
 * A notification's words, written once and rendered three ways: the e-mail's plain-text part,
 * its HTML part and a Telegram message (parse_mode HTML). Every value is escaped in the HTML
 * forms (`<`, `>`, `&`, quotes): a client's e-mail, username, external id or endpoint URL is
 * shown as text, never as markup. A link's URL may hold a one-time secret: it is passed as a
 * secret too (outbox.ts), so lists and logs never show it.
 */
import type { Brand } from '../domain/brand.js';

export type Part = string | { link: string; label: string };

export interface Message {
  subject: string;
  /** Paragraphs, in order. */
  parts: Part[];
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Telegram's HTML needs only <, > and & escaped (docs/operations.md "Notifications"). */
function escapeTelegram(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A subject is a header: one line, no control characters (header injection). */
export function oneLine(text: string): string {
  return text.replace(/[\r\n\t\v\f\0]+/g, ' ').trim();
}

/** An e-mail's plain text, without its sign-off (`signText`, added as it is sent). */
export function renderText(message: Message): string {
  return `${message.parts.map((part) => (typeof part === 'string' ? part : `${part.label}: ${part.link}`)).join('\n\n')}\n`;
}

export function renderHtml(message: Message): string {
  const paragraphs = message.parts
    .map((part) => (typeof part === 'string' ? `<p>${escapeHtml(part).replace(/\n/g, '<br>')}</p>` : `<p><a href="${escapeHtml(part.link)}">${escapeHtml(part.label)}</a></p>`))
    .join('\n');
  return `<!doctype html>\n<html><body style="font-family: sans-serif">\n<h2>${escapeHtml(oneLine(message.subject))}</h2>\n${paragraphs}\n</body></html>\n`;
}

/**
 * The sign-off of every e-mail: the brand's name and its support contact (docs/operations.md
 * "Branding"). The worker adds it as it sends (worker.ts), so an e-mail queued by any feature
 * carries the installation's brand. A body queued by an older version already has one.
 */
export function signOff(brand: Brand): string[] {
  const support = [brand.supportEmail, brand.supportUrl].filter((contact) => contact !== undefined);
  return [brand.name, ...(support.length > 0 ? [`Support: ${support.join(' · ')}`] : [])];
}

export function signText(text: string, lines: string[]): string {
  if (text.includes('\n-- \n')) return text;
  return `${text.replace(/\n*$/, '')}\n\n-- \n${lines.join('\n')}\n`;
}

export function signHtml(html: string, lines: string[]): string {
  if (html.includes('<p style="color:#777">')) return html;
  return html.replace(/<\/body><\/html>\n?$/, `<p style="color:#777">${lines.map(escapeHtml).join('<br>')}</p>\n</body></html>\n`);
}

/** Up to Telegram's 4096 characters. */
export function renderTelegram(message: Message): string {
  const body = message.parts
    .map((part) => (typeof part === 'string' ? escapeTelegram(part) : `<a href="${escapeTelegram(part.link).replace(/"/g, '&quot;')}">${escapeTelegram(part.label)}</a>`))
    .join('\n\n');
  const text = `<b>${escapeTelegram(oneLine(message.subject))}</b>\n\n${body}`;
  if (text.length <= 4096) return text;
  // Cut the plain text, not the markup (a tag cut in half is refused).
  return `<b>${escapeTelegram(oneLine(message.subject).slice(0, 200))}</b>\n\n${escapeTelegram(`${renderText(message).slice(0, 3000)}…`)}`;
}
