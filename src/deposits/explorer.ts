import { friendlyAddress } from '../domain/ton-address.js';

/**
 * Explorer links (docs/upstreams.md "Explorer links"), on tonviewer, per network: a transaction
 * by its hash in hex; an account by its address, as explorers show one (user-friendly).
 */
const TONVIEWER = { mainnet: 'https://tonviewer.com', testnet: 'https://testnet.tonviewer.com' } as const;

export function transactionUrl(txHash: string, network: 'mainnet' | 'testnet'): string {
  return `${TONVIEWER[network]}/transaction/${txHash}`;
}

/** An account's page: where an operator checks a wallet's transactions around a seqno. */
export function accountUrl(address: string, network: 'mainnet' | 'testnet'): string {
  return `${TONVIEWER[network]}/${friendlyAddress(address, network)}`;
}
