import type { WebhookConfig } from '../../config.js';
import type { Mode } from '../../domain/api-key.js';
import type { Brand } from '../../domain/brand.js';
import type { Db } from '../../db/engine.js';
import type { CreateOrderDeps } from '../../orders/create-order.js';
import type { PriceSource, RecipientDirectory } from '../../providers/ports.js';
import type { RateLimiter } from './rate-limit.js';

/** What the /api/v1 routes need from the rest of the service (built at the composition root). */
export interface ApiContext {
  db: Db;
  prices: PriceSource;
  /** Recipient lookups per mode; a missing mode answers 503 live_unavailable. */
  directories: Partial<Record<Mode, RecipientDirectory>>;
  orders: CreateOrderDeps;
  quoteTtlSeconds: number;
  /** Per-key limiter; undefined when RATE_LIMIT_RPS=0. */
  rateLimiter?: RateLimiter;
  /** PUBLIC_URL, or the address the server bound. */
  publicUrl: (request?: { protocol: string; host: string }) => string;
  /** Live top-ups: the deposit wallet (user-friendly, non-bounceable); undefined = not configured. */
  deposits?: { address: string; network: 'mainnet' | 'testnet' };
  /** Webhook URL rules and the rotation grace; absent = the defaults (no loopback). */
  webhooks?: WebhookConfig;
  /** SIGNUP_VERIFY: `required` refuses a live key (403 email_unverified) until an owner of its account verified an address. */
  signupVerify?: 'optional' | 'required';
  /** The name on the OpenAPI document and /docs (docs/operations.md "Branding"); absent = Starport. */
  brand?: Brand;
}
