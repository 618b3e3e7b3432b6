import { loadConfig } from '../../config.js';
import { walletChainReport } from '../../live/wallet/report.js';
import { formatTon } from '../../domain/money.js';
import { liveMargin } from '../../orders/admin.js';
import { type Command, UsageError } from '../command.js';
import { withDatabase } from '../database.js';
import { operatorCommand, time } from '../operator.js';

export const walletStatus: Command = operatorCommand({
  path: ['wallet', 'status'],
  summary: 'The paying wallet: address, balance, seqno, messages in flight or held, margin per live order',
  usage:
    'starport wallet status [--json]\n\n' +
    'Derives the paying wallet from WALLET_MNEMONIC / WALLET_MNEMONIC_FILE (WALLET_VERSION), asks toncenter (TON_API_URL)\n' +
    'for its balance and seqno, and lists from the database the signed messages not yet confirmed, the ones held for\n' +
    'review, and the live orders waiting to be paid with their margin: reserved − Fragment amount − LIVE_FEE_ALLOWANCE_TON\n' +
    '(the same margin `order show` reports).\n' +
    'Exit 0, or 2 when the wallet is not configured or its balance is below WALLET_MIN_BALANCE_TON.',
  options: {},
  async run(_values, io) {
    const config = loadConfig();
    if (!config.live.wallet.mnemonic) throw new UsageError('no paying wallet configured (set WALLET_MNEMONIC or WALLET_MNEMONIC_FILE)');
    const chain = await walletChainReport(config);
    const report = await withDatabase(async (db) => {
      const messages = await db.kysely
        .selectFrom('wallet_messages as m')
        .select(['m.hash', 'm.seqno', 'm.state', 'm.valid_until', 'm.total', 'm.broadcasts', 'm.created_at'])
        .select((eb) =>
          eb
            .selectFrom('wallet_message_orders as l')
            .select((e) => e.fn.countAll().as('n'))
            .whereRef('l.message_hash', '=', 'm.hash')
            .as('orders'),
        )
        .where('m.state', 'in', ['signed', 'broadcast', 'held'])
        .orderBy('m.seqno')
        .execute();
      const waiting = await db.kysely
        .selectFrom('live_payments as p')
        .innerJoin('orders as o', 'o.id', 'p.order_id')
        .select(['o.id', 'o.amount as reserved', 'p.amount', 'p.valid_until'])
        .where('o.status', '=', 'processing')
        .orderBy('p.created_at')
        .limit(100)
        .execute();
      return {
        in_flight: messages.filter((m) => m.state !== 'held').map(messageView),
        held: messages.filter((m) => m.state === 'held').map(messageView),
        orders: waiting.map((o) => ({
          order_id: o.id,
          reserved: formatTon(BigInt(o.reserved)),
          to_pay: formatTon(BigInt(o.amount)),
          margin: formatTon(liveMargin(BigInt(o.reserved), BigInt(o.amount), config.live.feeAllowance)),
          invoice_valid_until: time(Number(o.valid_until)),
        })),
      };
    });
    const low = chain.state === 'ok' && chain.balance_nanotons < config.live.wallet.minBalance;
    const document = {
      wallet: { version: config.live.wallet.version, ...chainView(chain), min_balance: formatTon(config.live.wallet.minBalance), low_balance: low },
      fee_allowance: formatTon(config.live.feeAllowance),
      ...report,
    };
    const lines = [
      chain.state === 'ok'
        ? `wallet ${chain.address} (${config.live.wallet.version}${chain.deployed ? '' : ', not deployed yet'}): balance ${chain.balance} TON${low ? ` — BELOW WALLET_MIN_BALANCE_TON ${formatTon(config.live.wallet.minBalance)}` : ''}, seqno ${chain.seqno}`
        : `wallet${'address' in chain && chain.address ? ` ${chain.address}` : ''}: ${chain.state === 'error' ? chain.message : chain.state}`,
      `in flight: ${report.in_flight.length === 0 ? 'none' : report.in_flight.map((m) => `seqno ${m.seqno} (${m.state}, ${m.orders} orders, ${m.total} TON, valid until ${m.valid_until})`).join('; ')}`,
      `held for review: ${report.held.length === 0 ? 'none' : report.held.map((m) => `seqno ${m.seqno} (${m.orders} orders; see bin/starport order resolve)`).join('; ')}`,
      `live orders in processing with a payment request: ${report.orders.length}${report.orders.length > 0 ? ` (margin = reserved − to pay − fee allowance ${formatTon(config.live.feeAllowance)} TON)` : ''}`,
      ...report.orders.map((o) => `  ${o.order_id}: reserved ${o.reserved}, to pay ${o.to_pay}, margin ${o.margin} TON`),
    ];
    io.result(document, lines.join('\n'));
    return chain.state === 'ok' && !low ? 0 : 2;
  },
});

function chainView(chain: Awaited<ReturnType<typeof walletChainReport>>) {
  if (chain.state !== 'ok') return chain;
  const { balance_nanotons: _omit, ...rest } = chain;
  return rest;
}

function messageView(m: { hash: string; seqno: bigint; state: string; valid_until: bigint; total: bigint; broadcasts: bigint; created_at: bigint; orders: unknown }) {
  return {
    hash: m.hash,
    seqno: Number(m.seqno),
    state: m.state,
    orders: Number(m.orders),
    total: formatTon(BigInt(m.total)),
    broadcasts: Number(m.broadcasts),
    signed_at: time(Number(m.created_at)),
    valid_until: time(Number(m.valid_until)),
  };
}
