import { loadConfig } from '../../config.js';
import { formatTon } from '../../domain/money.js';

/**
 * The paying wallet's chain view (balance, seqno) for the operator: `starport wallet status` and
 * the console's home and live pages. Errors become a state, never a crash.
 */
export async function walletChainReport(
  config = loadConfig(),
): Promise<
  | { state: 'not_configured' }
  | { state: 'ok'; address: string; raw_address: string; deployed: boolean; balance: string; balance_nanotons: bigint; seqno: number }
  | { state: 'error'; address?: string; message: string }
> {
  if (!config.live.wallet.mnemonic) return { state: 'not_configured' };
  const { openWalletChain } = await import('./assemble.js');
  let chain: Awaited<ReturnType<typeof openWalletChain>>;
  try {
    chain = await openWalletChain(config);
  } catch (error) {
    return { state: 'error', message: `the wallet mnemonic cannot be used (${(error as Error).message.slice(0, 80)})` };
  }
  const address = chain.address.toString({ bounceable: false, testOnly: config.tonNetwork === 'testnet' });
  try {
    const state = await chain.state();
    return {
      state: 'ok',
      address,
      raw_address: chain.address.toRawString(),
      deployed: state.active,
      balance: formatTon(state.balance),
      balance_nanotons: state.balance,
      seqno: state.seqno,
    };
  } catch (error) {
    return { state: 'error', address, message: `toncenter (TON_API_URL) did not answer: ${(error as Error).message}` };
  }
}
