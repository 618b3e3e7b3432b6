import type { ConsoleContext } from './context.js';

/** How long a console page waits for the chain's answer about the paying wallet. */
const WALLET_WAIT_MS = 3000;

/** The paying wallet's chain report (Home, Live), or an error state when the chain is slow: a page never hangs on it. */
export function walletWithin(ctx: ConsoleContext): ReturnType<ConsoleContext['wallet']> {
  const timeout = new Promise<{ state: 'error'; message: string }>((resolve) => {
    setTimeout(() => resolve({ state: 'error', message: `the chain did not answer within ${WALLET_WAIT_MS / 1000} s` }), WALLET_WAIT_MS).unref();
  });
  return Promise.race([ctx.wallet(), timeout]);
}
