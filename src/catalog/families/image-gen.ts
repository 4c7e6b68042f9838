import { z } from 'zod';
import { inMicros, type FamilyDefinition } from '../family';
import { at, oneOf, text, urlList } from '../fields';

const RATIOS = [
  'auto',
  '1:1',
  '1:2',
  '2:1',
  '2:3',
  '3:2',
  '4:3',
  '3:4',
  '4:5',
  '5:4',
  '16:9',
  '9:16',
  '21:9',
] as const;
/** Ratios that keep the 4k tier; every other 4k request is processed and billed as 2k. */
const FOUR_K_RATIOS = new Set(['16:9', '9:16', '21:9', '1:2', '2:1']);
const CUSTOM_SIZE = /^(\d+)x(\d+)$/;
const EDGE_MAX = 3840;
const PIXELS = { min: 655_360, max: 8_294_400 };
/** USD per image by quality and billed resolution. */
const PRICE_USD = {
  low: { '1k': 0.03, '2k': 0.04, '4k': 0.055 },
  medium: { '1k': 0.0424, '2k': 0.0448, '4k': 0.0808 },
  high: { '1k': 0.1688, '2k': 0.1776, '4k': 0.3208 },
} as const;
const PRICE_MICROS = inMicros(PRICE_USD);
const FIRST_POLL_SECONDS = { '1k': 30, '2k': 60, '4k': 120 } as const;

type Resolution = '1k' | '2k' | '4k';

function customSize(size: string | undefined): { width: number; height: number } | null {
  const m = size ? CUSTOM_SIZE.exec(size) : null;
  return m ? { width: Number(m[1]), height: Number(m[2]) } : null;
}

const schema = z
  .strictObject({
    mode: oneOf('mode', ['text-to-image', 'image-to-image']),
    prompt: text('prompt', { min: 1, max: 20_000 }),
    image_urls: urlList('image_urls', 1, 16).optional(),
    aspect_ratio: oneOf('aspect_ratio', RATIOS).default('auto'),
    size: z
      .string({ error: `${at('size')} must be a string` })
      .refine((s) => (RATIOS as readonly string[]).includes(s) || CUSTOM_SIZE.test(s), {
        error: `${at('size')} must be an aspect ratio (${RATIOS.join(', ')}) or a custom WIDTHxHEIGHT`,
      })
      .optional(),
    resolution: oneOf('resolution', ['1k', '2k', '4k']).default('1k'),
    quality: oneOf('quality', ['low', 'medium', 'high']).optional(),
  })
  .superRefine((input, ctx) => {
    const fail = (message: string) => ctx.addIssue({ code: 'custom', message });
    if (input.mode === 'image-to-image' && input.image_urls === undefined) {
      return fail(`${at('image_urls')} is required in image-to-image mode (1 to 16 URLs)`);
    }
    if (input.mode === 'text-to-image' && input.image_urls !== undefined) {
      return fail(`${at('image_urls')} is not supported in text-to-image mode`);
    }
    const custom = customSize(input.size);
    if (!custom) return;
    const { width, height } = custom;
    const size = `${at('size')} ${input.size}`;
    if (width % 16 !== 0 || height % 16 !== 0)
      return fail(`${size}: width and height must be divisible by 16`);
    if (width > EDGE_MAX || height > EDGE_MAX) return fail(`${size}: neither edge may exceed ${EDGE_MAX}`);
    const pixels = width * height;
    if (pixels < PIXELS.min || pixels > PIXELS.max) {
      return fail(`${size}: total pixels must be between ${PIXELS.min} and ${PIXELS.max} (it has ${pixels})`);
    }
    if (Math.max(width, height) > 3 * Math.min(width, height))
      return fail(`${size}: aspect ratio must be at most 3:1`);
    if (input.resolution !== '2k' && input.resolution !== '4k') {
      return fail(`${at('resolution')} must be 2k or 4k with a custom size (got ${input.resolution})`);
    }
  });

type Input = z.output<typeof schema>;

/** The tier the task is processed and billed at: 4k survives only for the ratios and sizes the spec names. */
export function billedResolution(input: Pick<Input, 'size' | 'aspect_ratio' | 'resolution'>): Resolution {
  if (input.resolution !== '4k') return input.resolution;
  const custom = customSize(input.size);
  if (custom) return custom.width === EDGE_MAX || custom.height === EDGE_MAX ? '4k' : '2k';
  const ratio = input.size ?? input.aspect_ratio; // size wins over aspect_ratio
  return FOUR_K_RATIOS.has(ratio) ? '4k' : '2k';
}

export const imageGen: FamilyDefinition<typeof schema> = {
  family: 'image-gen',
  category: 'image',
  displayName: 'Image generation',
  schema,
  failCodes: [
    'CONTENT_VIOLATION',
    'INVALID_IMAGE_URL',
    'INVALID_PARAMETER',
    'INSUFFICIENT_BALANCE',
    'UPSTREAM_ERROR',
    'TIMEOUT',
  ],
  pricing: {
    unit: 'image',
    usdPerImage: PRICE_USD,
    rules: [
      'without quality the image is billed as medium',
      '4k stays 4k only for 16:9, 9:16, 21:9, 1:2, 2:1 or a custom size with one edge of 3840; otherwise it is processed and billed as 2k',
      'size wins over aspect_ratio',
    ],
  },
  polling: [
    { workload: '1k (typical 30 to 120 s)', firstPollSeconds: 30, intervalSeconds: 10 },
    { workload: '2k (typical 60 to 180 s)', firstPollSeconds: 60, intervalSeconds: 10 },
    { workload: '4k (typical 120 to 240 s)', firstPollSeconds: 120, intervalSeconds: 10 },
  ],
  plan(input: Input) {
    const resolution = billedResolution(input);
    const quality = input.quality ?? 'medium';
    return {
      input: { ...input, resolution },
      chargeMicros: PRICE_MICROS[quality][resolution],
      output: { kind: 'image' },
      polling: { firstPollSeconds: FIRST_POLL_SECONDS[resolution], intervalSeconds: 10 },
    };
  },
};
