// The Address module alone: the @ton/core index loads the whole library (cells, contracts,
// crypto: ~200-400 ms here), and config.ts, which every CLI command loads, needs only this.
import { Address } from '@ton/core/dist/address/Address.js';

export class TonAddressError extends Error {}

/**
 * A TON address (raw `0:…` or user-friendly, either base64 alphabet) in the form to show for
 * deposits: user-friendly, URL-safe and non-bounceable (`UQ…`; `0Q…` for a testnet-only
 * address), so that a transfer is credited even while the wallet is not deployed
 * (research/ton.md §3). @ton/core throws strings as well as Errors: both become TonAddressError.
 */
export function depositAddressForm(text: string): string {
  const trimmed = text.trim();
  try {
    if (Address.isFriendly(trimmed)) {
      const { address, isTestOnly } = Address.parseFriendly(trimmed);
      return address.toString({ urlSafe: true, bounceable: false, testOnly: isTestOnly });
    }
    return Address.parseRaw(trimmed).toString({ urlSafe: true, bounceable: false, testOnly: false });
  } catch (error) {
    throw new TonAddressError(`not a TON address: "${text}" (${error instanceof Error ? error.message : String(error)})`);
  }
}
