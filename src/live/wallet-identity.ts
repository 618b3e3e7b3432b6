import { ConfigError } from '../env.js';
import type { WalletAccount } from './fragment/client.js';

/**
 * The paying wallet's public identity for Fragment's get*Link `account` field (raw address,
 * public key, StateInit), derived from WALLET_MNEMONIC with the contract of WALLET_VERSION.
 * Only public data leaves this function: the secret key is dropped at once (signing is part B's
 * wallet). @ton/* are loaded on first use, so CLI commands that do not need them stay fast.
 */
export async function validateMnemonic(words: string[]): Promise<void> {
  const { mnemonicValidate } = await import('@ton/crypto');
  if (!(await mnemonicValidate(words))) throw new ConfigError('the wallet mnemonic (WALLET_MNEMONIC / WALLET_MNEMONIC_FILE) is not a valid TON mnemonic');
}

export async function walletAccount(words: string[], version: 'v5r1' | 'v4'): Promise<WalletAccount> {
  const [{ mnemonicToPrivateKey }, ton, core] = await Promise.all([import('@ton/crypto'), import('@ton/ton'), import('@ton/core')]);
  const { publicKey } = await mnemonicToPrivateKey(words);
  const contract = version === 'v5r1' ? ton.WalletContractV5R1.create({ workchain: 0, publicKey }) : ton.WalletContractV4.create({ workchain: 0, publicKey });
  const stateInit = core.beginCell().store(core.storeStateInit(contract.init)).endCell();
  return { address: contract.address.toRawString(), publicKey: publicKey.toString('hex'), walletStateInit: stateInit.toBoc().toString('base64') };
}
