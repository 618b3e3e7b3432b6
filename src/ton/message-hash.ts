import { beginCell, type Cell, loadMessage, type Message, storeMessage } from '@ton/core';

/**
 * TEP-467 normalized hash of an external-in message (docs/upstreams.md "Normalized message hash (TEP-467)"): source none,
 * import fee 0, no StateInit, body stored as a reference. Unlike the raw hash it does not
 * depend on whether the StateInit was attached or how a node re-serialised the message, so it
 * is the key under which a signed message is looked up on chain.
 */
export function normalizedHash(messageCell: Cell): Buffer {
  return normalizedMessageHash(loadMessage(messageCell.beginParse()), messageCell);
}

export function normalizedMessageHash(message: Message, cell?: Cell): Buffer {
  if (message.info.type !== 'external-in') return cell?.hash() ?? beginCell().store(storeMessage(message)).endCell().hash();
  const normalized: Message = { info: { type: 'external-in', src: null, dest: message.info.dest, importFee: 0n }, init: null, body: message.body };
  return beginCell()
    .store(storeMessage(normalized, { forceRef: true }))
    .endCell()
    .hash();
}
