// The Address module alone: the @ton/core index loads the whole library (cells, contracts,
// crypto: ~200-400 ms here), and config.ts, which every CLI command loads, needs only this.
import { Address } from '@ton/core/dist/address/Address.js';

export class TonAddressError extends Error {}

/**
 * A TON address (raw `0:…` or user-friendly, either base64 alphabet) in the form to show for
 * deposits: user-friendly, URL-safe and non-bounceable (`UQ…`; `0Q…` for a testnet-only
 * address), so that a transfer is credited even while the wallet is not deployed
 * (docs/upstreams.md "Addresses"); with `network`, the testnet flag follows the network. @ton/core throws strings as well as Errors: both become TonAddressError.
 */
export function depositAddressForm(text: string, network?: 'mainnet' | 'testnet'): string {
  const trimmed = text.trim();
  try {
    if (Address.isFriendly(trimmed)) {
      const { address, isTestOnly } = Address.parseFriendly(trimmed);
      // Wallet apps refuse testnet-flagged addresses on mainnet: such a DEPOSIT_ADDRESS is a mistake.
      if (isTestOnly && network === 'mainnet') throw new Error('a testnet-only address (0Q…/kQ…) with TON_NETWORK=mainnet');
      return address.toString({ urlSafe: true, bounceable: false, testOnly: network ? network === 'testnet' : isTestOnly });
    }
    return Address.parseRaw(trimmed).toString({ urlSafe: true, bounceable: false, testOnly: network === 'testnet' });
  } catch (error) {
    throw new TonAddressError(`not a TON address: "${text}" (${error instanceof Error ? error.message : String(error)})`);
  }
}

/** The raw form (`0:…`, lowercase) of any address form: how addresses are stored and compared. */
export function rawAddressForm(text: string): string {
  try {
    return Address.parse(text.trim()).toRawString();
  } catch (error) {
    throw new TonAddressError(`not a TON address: "${text}" (${error instanceof Error ? error.message : String(error)})`);
  }
}

/** How explorers and wallets show an account (user-friendly, bounceable, URL-safe), from any form. */
export function friendlyAddress(text: string, network: 'mainnet' | 'testnet' = 'mainnet'): string {
  return Address.parse(text.trim()).toString({ urlSafe: true, bounceable: true, testOnly: network === 'testnet' });
}
