/**
 * Spaces upstream calls at most `perSecond` per second. One pacer per process (each process
 * of a scaled-out deployment paces itself: N processes may together make N × FRAGMENT_MAX_RPS
 * calls per second — size it accordingly).
 */
export class Pacer {
  private next = 0;
  private readonly intervalMs: number;

  constructor(perSecond: number) {
    this.intervalMs = 1000 / perSecond;
  }

  /** Resolves when this call may go out; calls are served in arrival order. */
  async wait(): Promise<void> {
    const now = performance.now();
    const at = Math.max(now, this.next);
    this.next = at + this.intervalMs;
    if (at > now) await new Promise((resolve) => setTimeout(resolve, at - now));
  }
}
