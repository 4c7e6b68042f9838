import { createCatalog, type TaskModel } from '../../src/catalog';
import { loadConfig } from '../../src/config';
import { usdToMicros } from '../../src/money';

/**
 * Every price GET /api/v1/models/{id} shows is the price charged: for each model of the default catalog, each entry
 * of its shown price table is turned into an input, prepared, and the charge compared with the shown USD. A family
 * that charged from its own second table would fail here as soon as the two disagreed.
 */
const catalog = createCatalog(loadConfig({ env: {} }).models);
const noProbe = async () => {
  throw new Error('no media in these inputs');
};

type Case = { input: Record<string, unknown>; usd: number; units: number };
type Table = Record<string, number>;

/** The inputs that exercise each entry of a family's shown `pricing`, with the price and units they must cost. */
function cases(family: string, pricing: Record<string, unknown>): Case[] {
  const entries = (table: unknown) => Object.entries(table as Table).filter(([, v]) => typeof v === 'number');
  switch (family) {
    case 'image-gen':
      return Object.entries(pricing.usdPerImage as Record<string, Table>).flatMap(([quality, table]) =>
        entries(table).map(([resolution, usd]) => ({
          // 16:9 keeps the 4k tier: every resolution is billed as asked.
          input: { mode: 'text-to-image', prompt: 'fox', quality, resolution, aspect_ratio: '16:9' },
          usd,
          units: 1,
        })),
      );
    case 'basic-image':
      return entries(pricing.usdPerImage).map(([resolution, usd]) => ({
        input: { prompt: 'fox', resolution },
        usd,
        units: 1,
      }));
    case 'basic-video':
      return entries(pricing.usdPerSecond).map(([resolution, usd]) => ({
        input: { prompt: 'fox', resolution, duration: 7 },
        usd,
        units: 7,
      }));
    case 'music':
      return [{ input: { mode: 'V5', prompt: 'a tune' }, usd: pricing.usdPerUse as number, units: 1 }];
    case 'short-clip-video': {
      const tiers = pricing.usdPerSecond as Record<string, Table & { modes: string[] }>;
      return Object.values(tiers).flatMap((tier) =>
        tier.modes.flatMap((mode) =>
          entries(tier).map(([resolution, usd]) => ({
            input: {
              mode,
              prompt: 'fox',
              resolution,
              duration: 9,
              ...(mode === 'text-to-video' ? {} : { image_urls: ['https://m.test/a.png'] }),
            },
            usd,
            units: 9,
          })),
        ),
      );
    }
    case 'first-frame-video':
      return [
        {
          input: { mode: 'standard-text-to-video', prompt: 'fox', duration: 10 },
          usd: pricing.usdPerSecondStandard as number,
          units: 10,
        },
        {
          input: { mode: 'pro-text-to-video', prompt: 'fox' },
          usd: pricing.usdPerGenerationPro as number,
          units: 1,
        },
      ];
    case 'multimodal-video':
      return entries(pricing.usdPerSecond).map(([resolution, usd]) => ({
        input: { mode: 'text-to-video', prompt: 'fox', resolution, duration: 8 },
        usd,
        units: 8,
      }));
    default:
      throw new Error(`no price cases for family ${family}: add them here`);
  }
}

const models: [string, TaskModel][] = catalog.list().map((m) => [m.id, m]);

describe.each(models)('%s: the shown price is the charged price', (_id, model) => {
  const shown = model.describe().pricing as Record<string, unknown>;
  const all = cases(model.family, shown);

  test('every shown price has a case', () => {
    expect(all.length).toBeGreaterThan(0);
  });

  test.each(all.map((c) => [JSON.stringify(c.input), c] as const))('%s', async (_name, c) => {
    const prepared = await model.prepare(c.input, { probe: noProbe });
    expect(prepared.chargeMicros).toBe(usdToMicros(c.usd) * c.units);
  });
});
