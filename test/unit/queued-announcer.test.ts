import { expect, test } from 'vitest';
import { QueuedAnnouncer } from '../../src/db/postgres-notify.js';

/** NOTIFY for queued work at most once per window, each announcement followed by one. */
test('the first announcement sends at once; a burst within the window shares one more, sent when the window ends', async () => {
  const sent: number[] = [];
  const announcer = new QueuedAnnouncer(async () => {
    sent.push(performance.now());
  }, 50);
  const first = announcer.announce();
  expect(sent).toHaveLength(1);
  await first;
  const calledAt = performance.now();
  const burst = Array.from({ length: 20 }, () => announcer.announce());
  expect(sent).toHaveLength(1);
  await Promise.all(burst);
  expect(sent).toHaveLength(2);
  // The shared one went out after every call it answers, and a window after the first.
  expect(sent[1]!).toBeGreaterThanOrEqual(calledAt);
  expect(sent[1]! - sent[0]!).toBeGreaterThanOrEqual(49);
});

test('an announcement made while the shared one is already being sent gets a later one of its own', async () => {
  const starts: number[] = [];
  let secondStarted: () => void = () => undefined;
  const secondStarting = new Promise<void>((resolve) => (secondStarted = resolve));
  let releaseSecond: () => void = () => undefined;
  const announcer = new QueuedAnnouncer(async () => {
    starts.push(performance.now());
    if (starts.length === 2) {
      secondStarted();
      await new Promise<void>((resolve) => (releaseSecond = resolve));
    }
  }, 20);
  await announcer.announce();
  const shared = announcer.announce();
  await secondStarting;
  // The shared NOTIFY is on its way: a commit announced now may be later than what it covers.
  const calledAt = performance.now();
  const late = announcer.announce();
  releaseSecond();
  await Promise.all([shared, late]);
  expect(starts).toHaveLength(3);
  expect(starts[2]!).toBeGreaterThanOrEqual(calledAt);
});
