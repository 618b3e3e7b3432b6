import type { FastifyInstance, onResponseHookHandler } from 'fastify';
import type { Registry } from 'prom-client';

const NAME = 'starport_http_request_duration_seconds';
const HELP = 'HTTP request latency by method, route and status';
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const;
/** The route label of requests no route matched (404s). */
const UNMATCHED = 'unmatched';

interface Series {
  labels: { method: string; route: string; status: string };
  /** Observations per bucket (not cumulative); the last slot counts those above every bound. */
  counts: number[];
  sum: number;
  count: number;
}

/**
 * `starport_http_request_duration_seconds{method,route,status}`, kept by hand and rendered by
 * prom-client's registry like one of its histograms (same name, labels, buckets and lines).
 * prom-client's `observe` validates the labels and builds a key string on every call, and the
 * route label needed `request.routeOptions`, which Fastify builds anew on every read: together
 * about 3 % of a read's CPU (docs/performance-history.md "Tenth round", `perf`). Here each route gets its own recorder when it
 * is registered, which finds a status's series in a small map by its number.
 */
export class RequestDurations {
  // What prom-client's Registry reads from a metric.
  readonly name = NAME;
  readonly help = HELP;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series: Series[] = [];

  constructor(registry: Registry) {
    registry.registerMetric(this as never);
  }

  /**
   * Times every request of `app`: each route registered from now on, and requests no route
   * matched.
   */
  instrument(app: FastifyInstance): void {
    app.addHook('onRoute', (route) => {
      const recorders = new Map([route.method].flat().map((method) => [method as string, this.recorder(method, route.url)]));
      const hook: onResponseHookHandler = (request, reply, done) => {
        recorders.get(request.method)?.(reply.statusCode, reply.elapsedTime);
        done();
      };
      route.onResponse = [...(route.onResponse === undefined ? [] : [route.onResponse].flat()), hook];
    });
    // Route-level hooks do not reach the not-found handler: this one does, and records only
    // what no route matched.
    const unmatched = new Map<string, ReturnType<RequestDurations['recorder']>>();
    app.addHook('onResponse', (request, reply, done) => {
      if (request.is404) {
        let record = unmatched.get(request.method);
        if (!record) unmatched.set(request.method, (record = this.recorder(request.method, UNMATCHED)));
        record(reply.statusCode, reply.elapsedTime);
      }
      done();
    });
  }

  /** Records one request of (method, route): its status and duration in milliseconds. */
  private recorder(method: string, route: string): (status: number, elapsedMs: number) => void {
    const byStatus = new Map<number, Series>();
    return (status, elapsedMs) => {
      let series = byStatus.get(status);
      if (!series) {
        series = { labels: { method, route, status: String(status) }, counts: new Array<number>(BUCKETS.length + 1).fill(0), sum: 0, count: 0 };
        byStatus.set(status, series);
        this.series.push(series);
      }
      const seconds = elapsedMs / 1000;
      let bucket = 0;
      while (bucket < BUCKETS.length && seconds > (BUCKETS[bucket] as number)) bucket++;
      series.counts[bucket]! += 1;
      series.sum += seconds;
      series.count += 1;
    };
  }

  /** The metric as prom-client's registry renders it: cumulative buckets, +Inf, sum and count per series. */
  async get() {
    const values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> = [];
    for (const { labels, counts, sum, count } of this.series) {
      let cumulative = 0;
      BUCKETS.forEach((bound, i) => {
        cumulative += counts[i] as number;
        values.push({ metricName: `${NAME}_bucket`, labels: { le: bound, ...labels }, value: cumulative });
      });
      values.push({ metricName: `${NAME}_bucket`, labels: { le: '+Inf', ...labels }, value: count });
      values.push({ metricName: `${NAME}_sum`, labels, value: sum });
      values.push({ metricName: `${NAME}_count`, labels, value: count });
    }
    return { name: NAME, help: HELP, type: this.type, values, aggregator: this.aggregator };
  }

  /** prom-client's `registry.resetMetrics()`: every series back to zero. */
  reset(): void {
    for (const series of this.series) {
      series.counts.fill(0);
      series.sum = 0;
      series.count = 0;
    }
  }
}
