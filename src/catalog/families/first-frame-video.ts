import { z } from 'zod';
import type { FamilyDefinition } from '../family';
import { usdToMicros } from '../../money';
import { at, intOrNumericString, oneOf, text } from '../fields';

const MODES = [
  'standard-text-to-video',
  'standard-image-to-video',
  'pro-text-to-video',
  'pro-image-to-video',
] as const;
const STANDARD_USD_PER_SECOND = 0.056;
const PRO_USD = 0.49; // per generation
const STANDARD_MICROS_PER_SECOND = usdToMicros(STANDARD_USD_PER_SECOND);
const PRO_MICROS = usdToMicros(PRO_USD);
const PRO_OUTPUT_SECONDS = 5;

const schema = z
  .strictObject({
    mode: oneOf('mode', MODES),
    prompt: text('prompt', { nonBlank: true, max: 2000, bytes: true }),
    image_urls: z.unknown().optional(),
    duration: z.unknown().optional(),
  })
  .superRefine((input, ctx) => {
    const fail = (message: string) => ctx.addIssue({ code: 'custom', message });
    if (input.mode.endsWith('image-to-video')) {
      const urls = input.image_urls;
      if (!Array.isArray(urls) || urls.length !== 1 || typeof urls[0] !== 'string' || urls[0].trim() === '') {
        return fail(`${at('image_urls')} must hold exactly 1 non-empty URL in ${input.mode} mode`);
      }
    }
    if (input.mode.startsWith('standard-')) {
      const check = duration.safeParse(input.duration);
      if (!check.success) return fail(check.error.issues[0].message);
    }
  });

/** Standard modes only: 6 or 10, as a number or a numeric string. */
const duration = intOrNumericString('duration', (n) => n === 6 || n === 10, '6 or 10 in standard modes');

type Input = z.output<typeof schema>;

export const firstFrameVideo: FamilyDefinition<typeof schema> = {
  family: 'first-frame-video',
  category: 'video',
  displayName: 'First-frame video',
  schema,
  failCodes: [
    'PromptInvalid',
    'SensitiveContent',
    'InputOutputSensitiveContentDetected',
    'ImageFormatIncorrect',
    'InvalidImageSize',
    'RateLimited',
    'Timeout',
    'Unknown error',
  ],
  pricing: {
    rules: [
      `standard modes: ${STANDARD_USD_PER_SECOND} USD per second x duration (6 or 10)`,
      `pro modes: ${PRO_USD} USD per generation (fixed ${PRO_OUTPUT_SECONDS} s, 1080p)`,
    ],
    usdPerSecondStandard: STANDARD_USD_PER_SECOND,
    usdPerGenerationPro: PRO_USD,
  },
  polling: [
    { workload: 'standard modes', firstPollSeconds: 30, intervalSeconds: [10, 15] },
    { workload: 'pro modes', firstPollSeconds: [45, 60], intervalSeconds: [10, 15] },
  ],
  plan(input: Input) {
    const standard = input.mode.startsWith('standard-');
    const normalized: Record<string, unknown> = { mode: input.mode, prompt: input.prompt };
    // image_urls is ignored by text modes, duration by pro modes: they are dropped, not validated.
    if (input.mode.endsWith('image-to-video')) normalized.image_urls = input.image_urls;
    if (standard) {
      const seconds = duration.parse(input.duration);
      normalized.duration = seconds;
      return {
        input: normalized,
        chargeMicros: STANDARD_MICROS_PER_SECOND * seconds,
        output: { kind: 'video', seconds },
        polling: { firstPollSeconds: 30, intervalSeconds: 10 },
      };
    }
    return {
      input: normalized,
      chargeMicros: PRO_MICROS,
      output: { kind: 'video', seconds: PRO_OUTPUT_SECONDS },
      polling: { firstPollSeconds: 45, intervalSeconds: 10 },
    };
  },
};
