import { describe, expect, test } from 'vitest';
import { Outage } from '../../src/db/outage.js';

/** A database outage seen by a loop: logged once as it begins and once as it ends, with back-off. */
describe('Outage', () => {
  const setup = () => {
    let now = 1_000_000;
    const lines: Array<{ level: string; details: Record<string, unknown>; message: string }> = [];
    const logger = {
      warn: (details: object, message: string) => lines.push({ level: 'warn', details: details as Record<string, unknown>, message }),
      info: (details: object, message: string) => lines.push({ level: 'info', details: details as Record<string, unknown>, message }),
    };
    const outage = new Outage('worker', () => now);
    return { outage, logger, lines, advance: (ms: number) => (now += ms) };
  };
  const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });

  test('logs the first failure only, backs off 100 ms doubling to 1 s, and logs the end once', () => {
    const { outage, logger, lines, advance } = setup();
    const waits: number[] = [];
    for (let i = 0; i < 7; i++) {
      waits.push(outage.failed(logger, full));
      advance(waits.at(-1)!);
    }
    expect(waits).toEqual([100, 200, 400, 800, 1_000, 1_000, 1_000]);
    expect(lines).toEqual([{ level: 'warn', message: 'worker: database unavailable; retrying', details: expect.objectContaining({ code: 'SQLITE_FULL', failures: 1 }) }]);
    expect(outage.ongoing).toBe(true);
    outage.recovered(logger);
    outage.recovered(logger);
    expect(lines.slice(1)).toEqual([{ level: 'info', message: 'worker: database available again', details: { outage_ms: 4_500, failures: 7 } }]);
    expect(outage.ongoing).toBe(false);
    // A new outage starts from the first wait again.
    expect(outage.failed(logger, full)).toBe(100);
    expect(lines).toHaveLength(3);
  });

  test('a long outage is logged again once a minute, with the failures so far', () => {
    const { outage, logger, lines, advance } = setup();
    for (let i = 0; i < 130; i++) {
      outage.failed(logger, full);
      advance(1_000);
    }
    expect(lines.map((line) => line.details.failures)).toEqual([1, 61, 121]);
  });

  test('without successes to end it, a failure after 10 s of quiet starts a new outage', () => {
    const { outage, logger, lines, advance } = setup();
    outage.failed(logger, full);
    advance(5_000);
    outage.failed(logger, full);
    advance(10_000);
    outage.failed(logger, full);
    expect(lines.map((line) => line.details.failures)).toEqual([1, 1]);
  });
});
