/** Timestamps are epoch milliseconds inside the service and RFC 3339 UTC with ms on the wire. */
export function formatTimestamp(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
