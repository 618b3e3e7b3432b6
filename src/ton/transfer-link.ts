import QRCode from 'qrcode';
import { formatTon, MoneyFormatError, parseTon } from '../domain/money.js';
import { formatUsdt, parseUsdt, USDT_UNITS } from '../domain/usdt.js';

/**
 * The live top-up's `ton://transfer` link (docs/upstreams.md "Transfer links"): the deposit address, the
 * amount in nanotons, and the account's memo as the text comment (percent-encoded, never `+`).
 */
const MAX_TOPUP_TON = 1_000_000n;

export function transferLink(address: string, memo: string, amount: bigint | undefined): string {
  const params = [...(amount !== undefined ? [`amount=${amount}`] : []), `text=${encodeURIComponent(memo)}`];
  return `ton://transfer/${address}?${params.join('&')}`;
}

/**
 * The USDT top-up's link (docs/operations.md "USDT top-ups"): a jetton transfer of `units`
 * (6 decimals) of the master's token to the deposit address, the memo as the comment.
 */
export function jettonTransferLink(address: string, master: string, memo: string, units: bigint | undefined): string {
  const params = [`jetton=${master}`, ...(units !== undefined ? [`amount=${units}`] : []), `text=${encodeURIComponent(memo)}`];
  return `ton://transfer/${address}?${params.join('&')}`;
}

const MAX_TOPUP_USDT = 10_000_000n;

export type UsdtAmountInput = { ok: true; units: bigint | undefined } | { ok: false; message: string };

/** The USDT amount field: empty is allowed; otherwise a positive USDT decimal (6 places at most). */
export function parseUsdtAmountInput(text: string, max = MAX_TOPUP_USDT): UsdtAmountInput {
  const trimmed = text.trim().replace(',', '.');
  if (trimmed === '') return { ok: true, units: undefined };
  let units: bigint;
  try {
    units = parseUsdt(trimmed);
  } catch {
    return { ok: false, message: 'Enter an amount in USDT, like 25 or 12.5, with at most 6 decimal places.' };
  }
  if (units <= 0n) return { ok: false, message: 'Enter an amount greater than 0.' };
  if (units > max * USDT_UNITS) return { ok: false, message: `Enter at most ${formatUsdt(max * USDT_UNITS)} USDT.` };
  return { ok: true, units };
}

export type AmountInput = { ok: true; nanotons: bigint | undefined } | { ok: false; message: string };

/** The amount field of a top-up form: empty is allowed (the wallet asks); otherwise a positive TON decimal. */
export function parseAmountInput(text: string, max = MAX_TOPUP_TON): AmountInput {
  const trimmed = text.trim().replace(',', '.');
  if (trimmed === '') return { ok: true, nanotons: undefined };
  let nanotons: bigint;
  try {
    nanotons = parseTon(trimmed);
  } catch (error) {
    if (!(error instanceof MoneyFormatError)) throw error;
    return { ok: false, message: 'Enter an amount in TON, like 25 or 2.5, with at most 9 decimal places.' };
  }
  if (nanotons <= 0n) return { ok: false, message: 'Enter an amount greater than 0.' };
  if (nanotons > max * 1_000_000_000n) return { ok: false, message: `Enter at most ${formatTon(max * 1_000_000_000n)} TON.` };
  return { ok: true, nanotons };
}

/** The QR code of a link as an SVG document, rendered here: no external service sees the link. */
export function qrSvg(link: string): Promise<string> {
  return QRCode.toString(link, { type: 'svg', errorCorrectionLevel: 'M', margin: 2, color: { dark: '#000000', light: '#ffffff' } });
}
