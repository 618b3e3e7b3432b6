import { Address, beginCell, Cell } from '@ton/core';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { type RetryPolicy, type ToncenterClient, ToncenterApiError, withRetry } from '../ton/toncenter.js';

/**
 * The deposit wallet's own jetton wallet for a jetton master (docs/operations.md "USDT top-ups"):
 * what the master's TEP-74 `get_wallet_address(owner)` answers, asked once through toncenter
 * v2 `runGetMethod` and kept in `jetton_wallets` (migration 0016-usdt-deposits), so that a
 * restart or another node never depends on the master answering again. A jetton wallet's
 * address is fixed by the master's code and the owner: it never changes.
 */
/** The master is not a deployed jetton master answering get_wallet_address (a definitive answer). */
export class JettonMasterError extends ToncenterApiError {}

export async function jettonWalletOf(
  db: Kysely<Database>,
  client: ToncenterClient,
  owner: Address,
  master: Address,
  options: { retry?: RetryPolicy; now?: number } = {},
): Promise<Address> {
  const key = { owner: owner.toRawString(), master: master.toRawString() };
  const kept = await db.selectFrom('jetton_wallets').select('wallet').where('owner', '=', key.owner).where('master', '=', key.master).executeTakeFirst();
  if (kept) return Address.parse(kept.wallet);
  const argument = beginCell().storeAddress(owner).endCell().toBoc().toString('base64');
  const result = await withRetry(() => client.runGetMethod(master.toString(), 'get_wallet_address', [['tvm.Slice', argument]]), options.retry);
  if (result.exit_code !== 0 && result.exit_code !== 1) {
    throw new JettonMasterError(
      `get_wallet_address on the jetton master ${master.toString()} failed with exit code ${result.exit_code} (is USDT_MASTER a deployed jetton master on this network?)`,
      false,
    );
  }
  const wallet = addressFromStack(result.stack[0]);
  if (!wallet) throw new JettonMasterError(`get_wallet_address on the jetton master ${master.toString()} did not answer an address`, false);
  await db
    .insertInto('jetton_wallets')
    .values({ ...key, wallet: wallet.toRawString(), computed_at: options.now ?? Date.now() })
    .onConflict((oc) => oc.columns(['owner', 'master']).doNothing())
    .execute();
  return wallet;
}

/** A v2 stack entry holding a slice with an address: `["cell" | "slice" | "tvm.Slice", {bytes} | base64]`. */
function addressFromStack(entry: [string, unknown] | undefined): Address | undefined {
  if (!entry) return undefined;
  const [, value] = entry;
  const bytes =
    typeof value === 'string'
      ? value
      : typeof value === 'object' && value !== null && typeof (value as { bytes?: unknown }).bytes === 'string'
        ? (value as { bytes: string }).bytes
        : undefined;
  if (!bytes) return undefined;
  try {
    return Cell.fromBase64(bytes).beginParse().loadAddress();
  } catch {
    return undefined;
  }
}
