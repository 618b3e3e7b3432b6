import { executionAsyncResource } from 'node:async_hooks';

/**
 * Keeps one of Node's own `process.nextTick` entries alive for the life of the process.
 *
 * Node 20 builds each entry as `{ [async_id_symbol]: …, [trigger_async_id_symbol]: …, callback,
 * args }`. V8 gives it its shape through map transitions that it holds only weakly, and an entry
 * lives for one tick: a full garbage collection that finds none alive drops those maps, and the
 * next entry gets new ones. After a few such collections (a service's start-up makes several)
 * the object literal's feedback in `nextTick` turns megamorphic, and from then on every
 * `nextTick` adds three of its four properties through V8's runtime, for the rest of the
 * process: 228 ns each instead of 38 in `serve` processes measured after 20,000 requests, and 6
 * of 8 of them had ended up so. Node's streams make about seven `nextTick`s per HTTP request.
 * (docs/performance-history.md, "Ninth round".)
 *
 * One entry kept alive keeps its maps, and with them the transitions and the feedback, stable.
 * The entry is the async resource of its own callback. Nothing depends on what it holds.
 */
let kept: object | undefined;

export function keepTickShape(): Promise<void> {
  if (kept) return Promise.resolve();
  return new Promise((resolve) =>
    process.nextTick(() => {
      kept = executionAsyncResource();
      resolve();
    }),
  );
}
