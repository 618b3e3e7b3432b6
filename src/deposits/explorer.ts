/**
 * Explorer links for a deposit's transaction (docs/upstreams.md "Explorer links"): tonviewer takes the hash
 * in hex, per network.
 */
const TONVIEWER = { mainnet: 'https://tonviewer.com', testnet: 'https://testnet.tonviewer.com' } as const;

export function transactionUrl(txHash: string, network: 'mainnet' | 'testnet'): string {
  return `${TONVIEWER[network]}/transaction/${txHash}`;
}
