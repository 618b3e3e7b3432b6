import type { Mode } from '../../domain/api-key.js';
import type { LowBalanceAlert } from '../../ledger/low-balance.js';
import { modePath, ton } from '../html/format.js';
import { type Html, html } from '../html/html.js';
import { notice } from './layout.js';
import type { TeamRole } from '../../db/schema.js';
import { may } from './rules.js';

/** "Top up" (live: how to send a transfer, for everyone), "Add test funds" and "Change the alert" for the roles that may. */
function bannerLinks(mode: Mode, role: TeamRole): Html[] {
  const links: Html[] = [];
  const topUp = modePath(mode, '/top-up');
  if (mode === 'live') links.push(html`<a href="${topUp}">Top up</a>`);
  else if (may(role, 'POST', topUp)) links.push(html`<a href="${topUp}">Add test funds</a>`);
  const alerts = modePath(mode, '/alerts');
  if (may(role, 'POST', alerts)) links.push(html`<a href="${alerts}">Change the alert</a>`);
  return links.map((link, i) => html`${i > 0 ? ' · ' : ''}${link}`);
}

/**
 * The low-balance banner (docs/dashboard.md "Low-balance alert"): one per mode whose available
 * balance is below its threshold, whichever mode is viewed (a live balance running out matters in
 * test mode too), linking to that mode's top-up page. Gone as soon as the balance is back.
 */
export function lowBalanceBanners(alerts: LowBalanceAlert[], role: TeamRole): Html[] {
  return alerts
    .filter((alert) => alert.below && alert.threshold !== null)
    .map(
      (alert) =>
        html`<div class="low-balance-banner" data-testid="low-balance-${alert.mode}">${notice(
          'warning',
          html`<strong>Your ${alert.mode} balance is low:</strong> ${ton(alert.available)} available, below your alert threshold of ${ton(alert.threshold as bigint)}.
${bannerLinks(alert.mode, role)}`,
        )}</div>`,
    );
}
