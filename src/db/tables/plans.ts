import type { Int } from './columns.js';

/** Price plans and the plan of each account (migration 0024; src/plans/). */

export interface PricePlansTable {
  name: string;
  kind: 'markup' | 'prices';
  /** JSON: the tiers, decimals as strings (src/domain/price-plan.ts `tierJson`). */
  tiers: string;
  created_at: Int;
  created_by: string;
}

/** No row: the account is priced with the global PRICE_MARKUP_PERCENT. */
export interface AccountPlansTable {
  account_id: string;
  plan_name: string;
  assigned_at: Int;
}
