import { z } from 'zod';
import { inMicros, type FamilyDefinition } from '../family';
import { usdToMicros } from '../../money';
import { at, bool, int, oneOf, text, urlList } from '../fields';

/**
 * The common category inputs of the service interface (image, video, audio), for models without a document of
 * their own. Their prices are not in the spec: Genway's defaults, recorded in docs/decisions.md.
 */

const IMAGE_USD = { '1K': 0.02, '2K': 0.03, '4K': 0.05 } as const;
const IMAGE_MICROS = inMicros(IMAGE_USD);

const basicImageSchema = z
  .strictObject({
    mode: oneOf('mode', ['text-to-image', 'image-to-image']).default('text-to-image'),
    prompt: text('prompt', { min: 1, max: 5000 }),
    negative_prompt: text('negative_prompt').optional(),
    image_urls: urlList('image_urls', 1, 5).optional(),
    aspect_ratio: oneOf('aspect_ratio', [
      '1:1',
      '4:3',
      '3:4',
      '3:2',
      '2:3',
      '4:5',
      '5:4',
      '9:16',
      '16:9',
      '21:9',
      'auto',
    ]).default('1:1'),
    resolution: oneOf('resolution', ['1K', '2K', '4K']).default('2K'),
    output_format: oneOf('output_format', ['png', 'jpeg']).default('png'),
  })
  .superRefine((input, ctx) => {
    if (input.mode === 'image-to-image' && input.image_urls === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `${at('image_urls')} is required in image-to-image mode (1 to 5 URLs)`,
      });
    }
  });

export const basicImage: FamilyDefinition<typeof basicImageSchema> = {
  family: 'basic-image',
  category: 'image',
  displayName: 'Image (common inputs)',
  schema: basicImageSchema,
  failCodes: ['CONTENT_VIOLATION', 'INVALID_IMAGE_URL', 'UPSTREAM_ERROR', 'TIMEOUT'],
  pricing: { unit: 'image', usdPerImage: IMAGE_USD },
  polling: [{ workload: 'any', firstPollSeconds: 3, intervalSeconds: 3 }],
  plan(input) {
    return {
      input: { ...input },
      chargeMicros: IMAGE_MICROS[input.resolution],
      output: { kind: 'image' },
      polling: { firstPollSeconds: 3, intervalSeconds: 3 },
    };
  },
};

const VIDEO_USD_PER_SECOND = { '480p': 0.05, '720p': 0.08, '1080p': 0.1 } as const;
const VIDEO_RATE_MICROS = inMicros(VIDEO_USD_PER_SECOND);

const basicVideoSchema = z
  .strictObject({
    mode: oneOf('mode', ['text-to-video', 'image-to-video']).default('text-to-video'),
    prompt: text('prompt', { nonBlank: true, max: 5000 }),
    negative_prompt: text('negative_prompt').optional(),
    image_urls: urlList('image_urls', 1, 2).optional(),
    aspect_ratio: oneOf('aspect_ratio', ['1:1', '16:9', '9:16']).default('16:9'),
    resolution: oneOf('resolution', ['480p', '720p', '1080p']).default('1080p'),
    duration: int('duration', 1, 30),
    sound: bool('sound').default(false),
  })
  .superRefine((input, ctx) => {
    if (input.mode === 'image-to-video' && input.image_urls === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `${at('image_urls')} is required in image-to-video mode (1 to 2 URLs)`,
      });
    }
  });

export const basicVideo: FamilyDefinition<typeof basicVideoSchema> = {
  family: 'basic-video',
  category: 'video',
  displayName: 'Video (common inputs)',
  schema: basicVideoSchema,
  failCodes: ['CONTENT_VIOLATION', 'INVALID_IMAGE_URL', 'UPSTREAM_ERROR', 'TIMEOUT'],
  pricing: { unit: 'second', usdPerSecond: VIDEO_USD_PER_SECOND },
  polling: [{ workload: 'any', firstPollSeconds: 30, intervalSeconds: 10 }],
  plan(input) {
    return {
      input: { ...input },
      chargeMicros: VIDEO_RATE_MICROS[input.resolution] * input.duration,
      output: { kind: 'video', seconds: input.duration },
      polling: { firstPollSeconds: 30, intervalSeconds: 10 },
    };
  },
};

const MUSIC_USD = 0.05;
const MUSIC_MICROS = usdToMicros(MUSIC_USD);

const musicSchema = z.strictObject({
  mode: oneOf('mode', ['V4', 'V4_5', 'V4_5PLUS', 'V5']),
  prompt: text('prompt', { nonBlank: true, max: 5000 }),
  customMode: bool('customMode').default(false),
  instrumental: bool('instrumental').default(false),
});

export const music: FamilyDefinition<typeof musicSchema> = {
  family: 'music',
  category: 'audio',
  displayName: 'Music',
  schema: musicSchema,
  failCodes: ['CONTENT_VIOLATION', 'UPSTREAM_ERROR', 'TIMEOUT'],
  pricing: { unit: 'use', usdPerUse: MUSIC_USD },
  polling: [{ workload: 'any', firstPollSeconds: 30, intervalSeconds: 10 }],
  plan(input) {
    return {
      input: { ...input },
      chargeMicros: MUSIC_MICROS,
      output: { kind: 'audio' },
      polling: { firstPollSeconds: 30, intervalSeconds: 10 },
    };
  },
};
