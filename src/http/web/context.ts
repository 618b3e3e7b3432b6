import type { WebhookConfig } from '../../config.js';
import type { Db } from '../../db/engine.js';
import type { Brand } from '../../domain/brand.js';
import type { Decimal } from '../../domain/decimal.js';
import type { TelegramBot } from '../../notifications/telegram.js';
import type { PriceSource } from '../../providers/ports.js';

/** What the dashboard needs from the composition root (src/service.ts). */
export interface WebContext {
  db: Db;
  /** The reseller's name, logo, accent and links (docs/operations.md "Branding"). */
  brand: Brand;
  signup: 'open' | 'closed';
  /** User-friendly non-bounceable deposit address; undefined = live top-ups not configured. */
  depositAddress: string | undefined;
  /** TON_NETWORK, for explorer links (default mainnet). */
  tonNetwork?: 'mainnet' | 'testnet';
  /** PUBLIC_URL when set; otherwise pages use the origin the browser asked for. */
  publicUrl: string | undefined;
  /**
   * The origin of links sent by e-mail (reset, verification, invites): PUBLIC_URL, else the
   * address the server bound. Never the request's Host header, which a client chooses: a forged
   * Host would otherwise put an attacker's origin in front of a victim's reset token.
   */
  linkOrigin: () => string;
  /** USDT top-ups (USDT_MASTER, spread, minimum); absent or master undefined = TON only. */
  usdt?: { master: string | undefined; spreadPercent: Decimal; minUnits: bigint };
  /** Webhook URL rules and the rotation grace (webhooks page). */
  webhooks?: WebhookConfig;
  /** The notifications page: the Telegram bot when TELEGRAM_BOT_TOKEN is set (deep links). */
  /** The API's price source: pages quote the account's price (its plan's) with it. */
  prices?: PriceSource;
  notifications?: { telegram: TelegramBot | undefined; telegramWebhookSecret: string | undefined; emailConfigured: boolean };
}
