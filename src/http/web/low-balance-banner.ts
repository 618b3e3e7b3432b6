import type { LowBalanceAlert } from '../../ledger/low-balance.js';
import { modePath, ton } from './format.js';
import { type Html, html } from './html.js';
import { notice } from './layout.js';

/**
 * The low-balance banner (docs/dashboard.md "Low-balance alert"): one per mode whose available
 * balance is below its threshold, whichever mode is viewed (a live balance running out matters in
 * test mode too), linking to that mode's top-up page. Gone as soon as the balance is back.
 */
export function lowBalanceBanners(alerts: LowBalanceAlert[]): Html[] {
  return alerts
    .filter((alert) => alert.below && alert.threshold !== null)
    .map(
      (alert) =>
        html`<div class="low-balance-banner" data-testid="low-balance-${alert.mode}">${notice(
          'warning',
          html`<strong>Your ${alert.mode} balance is low:</strong> ${ton(alert.available)} available, below your alert threshold of ${ton(alert.threshold as bigint)}.
<a href="${modePath(alert.mode, '/top-up')}">${alert.mode === 'live' ? 'Top up' : 'Add test funds'}</a> · <a href="${modePath(alert.mode, '/alerts')}">Change the alert</a>`,
        )}</div>`,
    );
}
