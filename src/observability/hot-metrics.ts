import type { Registry } from 'prom-client';

/**
 * Counters and histograms for the per-request path, registered in the same prom-client registry and exported in
 * the same text format. prom-client's own metrics validate and hash the label object on every call; here a label
 * set is looked up by its joined values and an observation is a bucket search and three additions. Label values
 * come from code (route templates, methods, status codes, vendor names), never unchecked from clients.
 */

type Labels<L extends string> = Record<L, string>;

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

interface Series<L extends string> {
  labels: Labels<L>;
}

abstract class HotMetric<L extends string, S extends Series<L>> {
  readonly aggregator = 'sum';
  abstract readonly type: 'counter' | 'histogram';
  protected series = new Map<string, S>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[],
    registers: Registry[],
  ) {
    for (const registry of registers) registry.registerMetric(this as never);
  }

  protected abstract create(labels: Labels<L>): S;

  protected idOf(labels: Labels<L>): string {
    let id = '';
    for (const name of this.labelNames) id += `${labels[name]}\u0000`;
    return id;
  }

  protected seriesOf(labels: Labels<L>, id = this.idOf(labels)): S {
    let series = this.series.get(id);
    if (!series) {
      const own = {} as Labels<L>;
      for (const name of this.labelNames) own[name] = String(labels[name]);
      this.series.set(id, (series = this.create(own)));
    }
    return series;
  }

  protected abstract values(): MetricValue[];

  /** What prom-client's registry reads to render and to merge metrics. */
  async get() {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      values: this.values(),
      aggregator: this.aggregator,
    };
  }

  reset(): void {
    this.series.clear();
  }
}

interface CounterSeries<L extends string> extends Series<L> {
  value: number;
}

export class HotCounter<L extends string> extends HotMetric<L, CounterSeries<L>> {
  readonly type = 'counter';

  constructor(options: { name: string; help: string; labelNames: readonly L[]; registers: Registry[] }) {
    super(options.name, options.help, options.labelNames, options.registers);
  }

  protected create(labels: Labels<L>): CounterSeries<L> {
    return { labels, value: 0 };
  }

  inc(labels: Labels<L>, by = 1): void {
    this.seriesOf(labels).value += by;
  }

  /** One label set, bound once: its increments skip building the label id (still right after a reset). */
  child(labels: Labels<L>): { inc(by?: number): void } {
    const id = this.idOf(labels);
    return { inc: (by = 1) => void (this.seriesOf(labels, id).value += by) };
  }

  protected values(): MetricValue[] {
    return [...this.series.values()].map(({ labels, value }) => ({ labels, value }));
  }
}

interface HistogramSeries<L extends string> extends Series<L> {
  /** Per-bucket (not cumulative) counts; the last slot is above the highest bound. */
  counts: Float64Array;
  sum: number;
  count: number;
}

export class HotHistogram<L extends string> extends HotMetric<L, HistogramSeries<L>> {
  readonly type = 'histogram';
  private readonly buckets: readonly number[];

  constructor(options: {
    name: string;
    help: string;
    labelNames: readonly L[];
    buckets: number[];
    registers: Registry[];
  }) {
    super(options.name, options.help, options.labelNames, options.registers);
    this.buckets = [...options.buckets].sort((a, b) => a - b);
  }

  protected create(labels: Labels<L>): HistogramSeries<L> {
    return { labels, counts: new Float64Array(this.buckets.length + 1), sum: 0, count: 0 };
  }

  observe(labels: Labels<L>, value: number): void {
    this.record(this.seriesOf(labels), value);
  }

  /** One label set, bound once: its observations skip building the label id (still right after a reset). */
  child(labels: Labels<L>): { observe(value: number): void } {
    const id = this.idOf(labels);
    return { observe: (value) => this.record(this.seriesOf(labels, id), value) };
  }

  private record(series: HistogramSeries<L>, value: number): void {
    if (!Number.isFinite(value)) return;
    const { buckets } = this;
    let i = 0;
    while (i < buckets.length && value > buckets[i]) i++;
    series.counts[i] += 1;
    series.sum += value;
    series.count += 1;
  }

  /** The upper bounds of the buckets (the counts of a series have one more slot: above the last bound). */
  get bounds(): readonly number[] {
    return this.buckets;
  }

  /** Every label set with its per-bucket counts (live arrays: read them, do not keep them). */
  *entries(): IterableIterator<{
    id: string;
    labels: Readonly<Labels<L>>;
    counts: Float64Array;
    count: number;
  }> {
    for (const [id, { labels, counts, count }] of this.series) yield { id, labels, counts, count };
  }

  protected values(): MetricValue[] {
    const out: MetricValue[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const { labels, counts, sum, count } of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += counts[i];
        out.push({ labels: { le, ...labels }, value: cumulative, metricName: bucketName });
      });
      out.push({ labels: { le: '+Inf', ...labels }, value: count, metricName: bucketName });
      out.push({ labels, value: sum, metricName: `${this.name}_sum` });
      out.push({ labels, value: count, metricName: `${this.name}_count` });
    }
    return out;
  }
}
