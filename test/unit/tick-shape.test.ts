import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../support/cli.js';

/**
 * keepTickShape (src/runtime/tick-shape.ts), in a fresh process of its own: this test process has
 * long since made its own garbage collections. Full collections between bursts of nextTick, as a
 * service's start-up makes them, turn the feedback of nextTick's object literal megamorphic
 * unless an entry is kept alive. V8 reports the feedback through %DebugPrint.
 */
function literalFeedback(keep: boolean): { monomorphic: number; megamorphic: number } {
  const module = pathToFileURL(path.join(PROJECT_ROOT, 'dist', 'runtime', 'tick-shape.js')).href;
  const script = `
    if (${keep}) await (await import(${JSON.stringify(module)})).keepTickShape();
    const noop = () => {};
    for (let round = 0; round < 30; round++) {
      for (let i = 0; i < 2000; i++) process.nextTick(noop, i);
      await new Promise((resolve) => setImmediate(resolve));
      globalThis.gc();
    }
    new Function('f', '%DebugPrint(f)')(process.nextTick);`;
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8', maxBuffer: 1 << 24 });
  const count = (state: string) => out.split(`DefineKeyedOwnPropertyInLiteral ${state}`).length - 1;
  return { monomorphic: count('MONOMORPHIC'), megamorphic: count('MEGAMORPHIC') };
}

describe('keepTickShape', () => {
  it("keeps nextTick's entries on one shape across full garbage collections", () => {
    // How many of the literal's property sites V8 reports differs by version (4 on Node 20, 5 on
    // Node 24); what matters is that every one stays monomorphic.
    const feedback = literalFeedback(true);
    expect(feedback.megamorphic).toBe(0);
    expect(feedback.monomorphic).toBeGreaterThanOrEqual(4);
  });

  it('is needed: without it the same collections leave the literal megamorphic (if this fails, Node no longer needs the shim)', () => {
    // Most runs end megamorphic, not every one (about 1 in 8 here): one of three suffices.
    const runs = [literalFeedback(false)];
    while (runs.length < 3 && runs.every((run) => run.megamorphic === 0)) runs.push(literalFeedback(false));
    expect(runs.some((run) => run.megamorphic > 0)).toBe(true);
  });
});
