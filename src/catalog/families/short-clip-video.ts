import { z } from 'zod';
import { inMicros, type FamilyDefinition } from '../family';
import { at, bool, int, oneOf, text, urlList } from '../fields';

const MODES = ['text-to-video', 'image-to-video', 'turbo-image-to-video'] as const;
const RESOLUTIONS = ['540p', '720p', '1080p'] as const;
/** USD per second by tier and resolution. */
const RATE_USD = {
  standard: { '540p': 0.07, '720p': 0.15, '1080p': 0.16 },
  turbo: { '540p': 0.04, '720p': 0.06, '1080p': 0.08 },
} as const;
const RATE_MICROS = inMicros(RATE_USD);

const schema = z
  .strictObject({
    mode: oneOf('mode', MODES),
    prompt: text('prompt', { nonBlank: true, max: 5000 }),
    resolution: oneOf('resolution', RESOLUTIONS),
    duration: int('duration', 1, 16),
    style: oneOf('style', ['general', 'anime']).optional(),
    aspect_ratio: oneOf('aspect_ratio', ['16:9', '9:16', '4:3', '3:4', '1:1']).optional(),
    image_urls: urlList('image_urls', 1, 2).optional(),
    movement: oneOf('movement', ['auto', 'small', 'medium', 'large']).optional(),
    sound: bool('sound').default(true),
    bgm: bool('bgm').default(true),
    seed: int('seed', -1, 2_147_483_647).optional(),
  })
  .superRefine((input, ctx) => {
    const fail = (message: string) => ctx.addIssue({ code: 'custom', message });
    if (input.mode === 'text-to-video') {
      if (input.image_urls !== undefined)
        return fail(`${at('image_urls')} is not supported in text-to-video mode`);
    } else {
      if (input.image_urls === undefined)
        return fail(`${at('image_urls')} is required in ${input.mode} mode (1 to 2 URLs)`);
      for (const field of ['style', 'aspect_ratio'] as const) {
        if (input[field] !== undefined) return fail(`${at(field)} is only supported in text-to-video mode`);
      }
    }
  });

type Input = z.output<typeof schema>;

export const shortClipVideo: FamilyDefinition<typeof schema> = {
  family: 'short-clip-video',
  category: 'video',
  displayName: 'Short-clip video',
  schema,
  failCodes: [
    'PromptInvalid',
    'SensitiveContent',
    'ImageFormatIncorrect',
    'RateLimited',
    'Timeout',
    'StreamError',
    'Unknown error',
  ],
  pricing: {
    unit: 'second',
    rules: ['price per second x duration'],
    usdPerSecond: {
      standard: { modes: ['text-to-video', 'image-to-video'], ...RATE_USD.standard },
      turbo: { modes: ['turbo-image-to-video'], ...RATE_USD.turbo },
    },
  },
  polling: [
    { workload: 'short turbo previews', firstPollSeconds: 60, intervalSeconds: [5, 10] },
    { workload: 'standard text or image', firstPollSeconds: [60, 90], intervalSeconds: [5, 10] },
    { workload: 'longer (over 10 s) or 1080p jobs', firstPollSeconds: 90, intervalSeconds: 10 },
  ],
  plan(input: Input) {
    const tier = input.mode === 'turbo-image-to-video' ? 'turbo' : 'standard';
    const normalized: Record<string, unknown> = { ...input };
    if (input.mode === 'text-to-video') normalized.aspect_ratio = input.aspect_ratio ?? '4:3';
    const long = input.duration > 10 || input.resolution === '1080p';
    return {
      input: normalized,
      chargeMicros: RATE_MICROS[tier][input.resolution] * input.duration,
      output: { kind: 'video', seconds: input.duration },
      polling: long
        ? { firstPollSeconds: 90, intervalSeconds: 10 }
        : { firstPollSeconds: 60, intervalSeconds: 5 },
    };
  },
};
