/**
 * Knobs of the reliability pass, read from the environment so any failure replays:
 *
 *   RELIABILITY_RUNS   fuzz cases per endpoint (CI default 2,000; long mode e.g. 100000)
 *   RELIABILITY_SEED   the fast-check / random seed (printed by every suite; default: random)
 *   RELIABILITY_KILLS  SIGKILLs per crash-recovery run (default 20)
 */
function integer(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  if (!/^-?\d+$/.test(text)) throw new Error(`${name} must be an integer, got ${JSON.stringify(text)}`);
  return Number(text);
}

export const RUNS = integer('RELIABILITY_RUNS', 2000);
export const KILLS = integer('RELIABILITY_KILLS', 20);
export const SEED = integer('RELIABILITY_SEED', (Date.now() ^ (process.pid << 10)) | 0);
/** Long mode (RELIABILITY_RUNS above the CI default) scales the other suites' counts up a little too. */
export const LONG = RUNS > 2000;

/** Prints the seed in a form that can be pasted back. */
export function announceSeed(suite: string): void {
  console.log(`[reliability] ${suite}: RELIABILITY_SEED=${SEED} RELIABILITY_RUNS=${RUNS} (engine ${process.env.TEST_ENGINE ?? 'sqlite'})`);
}

/** A small seeded PRNG (mulberry32) for the suites that draw outside fast-check. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
