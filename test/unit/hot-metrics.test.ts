import { Counter, Histogram, Registry } from 'prom-client';
import { HotCounter, HotHistogram } from '../../src/observability/hot-metrics';

/** The lean metrics must render exactly as prom-client's own would, scrape for scrape. */
describe('HotCounter and HotHistogram', () => {
  const observations: [Record<'route' | 'status', string>, number][] = [
    [{ route: '/a', status: '200' }, 0.0004],
    [{ route: '/a', status: '200' }, 0.001], // on a bound: counted in that bucket (le is inclusive)
    [{ route: '/a', status: '500' }, 0.02],
    [{ route: '/b "x"\\', status: '200' }, 7], // above every bound: only +Inf
    [{ route: '/a', status: '200' }, 0.003],
  ];
  const buckets = [0.001, 0.005, 0.01];

  test('a histogram renders like prom-client’s Histogram', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const hot = new HotHistogram({
      name: 'h_seconds',
      help: 'help',
      labelNames: ['route', 'status'],
      buckets,
      registers: [ours],
    });
    const plain = new Histogram({
      name: 'h_seconds',
      help: 'help',
      labelNames: ['route', 'status'],
      buckets,
      registers: [theirs],
    });
    for (const [labels, value] of observations) {
      hot.observe(labels, value);
      plain.observe(labels, value);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).toContain('h_seconds_bucket{le="0.001",route="/a",status="200"} 2\n');
    expect(await ours.metrics()).toContain('h_seconds_count{route="/a",status="200"} 3\n');
  });

  test('a counter renders like prom-client’s Counter, and reset empties both', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const hot = new HotCounter({
      name: 'c_total',
      help: 'help',
      labelNames: ['route', 'status'],
      registers: [ours],
    });
    const plain = new Counter({
      name: 'c_total',
      help: 'help',
      labelNames: ['route', 'status'],
      registers: [theirs],
    });
    for (const [labels, value] of observations) {
      hot.inc(labels);
      hot.inc(labels, value);
      plain.inc(labels);
      plain.inc(labels, value);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).toContain('c_total{route="/a",status="200"} 3.0044\n');
    ours.resetMetrics();
    theirs.resetMetrics();
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });
});
