import { tonAmount } from '../domain/money.js';
import { formatTimestamp } from '../domain/time.js';
import { friendlyAddress } from '../domain/ton-address.js';
import { formatUsdt } from '../domain/usdt.js';
import { transactionUrl } from './explorer.js';
import type { Deposit } from './store.js';

/** The statuses a client sees in GET /deposits (docs/api.md "GET /deposits"). */
export const CLIENT_DEPOSIT_STATUSES = ['credited', 'awaiting_rate'] as const;
type ClientDepositStatus = (typeof CLIENT_DEPOSIT_STATUSES)[number];

/** The deposits a client sees are only those (the list asks the store for no others). */
function clientStatus(status: Deposit['status']): ClientDepositStatus {
  if (status === 'credited' || status === 'awaiting_rate') return status;
  throw new Error(`A deposit in status ${status} is not shown to clients.`);
}

/**
 * A deposit as GET /deposits answers it (docs/api.md "GET /deposits"): `amount` is the TON
 * credited (null while a USDT deposit waits for a rate), `usdt` the USDT that arrived and the
 * rate it was converted at (null for a TON deposit).
 */
export function depositWire(deposit: Deposit, network: 'mainnet' | 'testnet') {
  const waiting = deposit.status === 'awaiting_rate';
  return {
    id: deposit.id,
    asset: deposit.asset === 'USDT' ? ('USDT' as const) : ('TON' as const),
    amount: waiting ? null : tonAmount(deposit.amount),
    usdt:
      deposit.asset === 'USDT'
        ? {
            amount: formatUsdt(deposit.jettonAmount ?? 0n),
            rate: deposit.rate,
            rate_at: deposit.rateAt === null ? null : formatTimestamp(deposit.rateAt),
          }
        : null,
    status: clientStatus(deposit.status),
    tx_hash: deposit.txHash,
    sender: friendlyAddress(deposit.sender, network),
    created_at: formatTimestamp(deposit.chainTime),
    credited_at: waiting ? null : formatTimestamp(deposit.creditedAt ?? deposit.createdAt),
    explorer_url: transactionUrl(deposit.txHash, network),
  };
}
