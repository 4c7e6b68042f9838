import { z } from 'zod';
import { ApiError } from '../../errors';
import type { FamilyDefinition } from '../family';
import { inMicros, perSecondMicros, settleSmartDuration, toMillis } from '../family';
import { at, bool, has, int, intOrNumericString, oneOf, text, urlList } from '../fields';

const MODES = ['text-to-video', 'image-to-video', 'reference-to-video'] as const;
const MEDIA = ['image_urls', 'video_urls', 'audio_urls', 'file_urls', 'link_urls'] as const;
/** USD per second, the same in every mode: 0.07, 0.12, 0.225. */
const RATE_USD = { '480p': 0.07, '720p': 0.12, '1080p': 0.225 } as const;
const RATE_MICROS = inMicros(RATE_USD);
const SMART_PRECHARGE_OUTPUT_SECONDS = 30;
const MEDIA_SECONDS = { min: 1, max: 15, total: 15 };

const schema = z
  .strictObject({
    mode: oneOf('mode', MODES),
    prompt: text('prompt', { max: 20_000 }).optional(),
    resolution: oneOf('resolution', ['480p', '720p', '1080p']).default('1080p'),
    aspect_ratio: oneOf('aspect_ratio', ['auto', '16:9', '4:3', '1:1', '3:4', '9:16']).default('auto'),
    duration: intOrNumericString(
      'duration',
      (n) => n === -1 || (n >= 2 && n <= 30),
      '-1 or an integer from 2 to 30',
    ).default(5),
    sound: bool('sound').default(true),
    watermark: bool('watermark').default(false),
    seed: int('seed', 0, 2_147_483_647).optional(),
    image_urls: urlList('image_urls', 1, 10).optional(),
    video_urls: urlList('video_urls', 1, 5).optional(),
    audio_urls: urlList('audio_urls', 1, 5).optional(),
    file_urls: urlList('file_urls', 1, 1).optional(),
    link_urls: urlList('link_urls', 1, 1).optional(),
  })
  .superRefine((input, ctx) => {
    const fail = (message: string) => ctx.addIssue({ code: 'custom', message });
    if (input.mode === 'text-to-video') {
      if (!input.prompt?.trim())
        return fail(`${at('prompt')} is required and must not be empty in text-to-video mode`);
      for (const field of MEDIA)
        if (input[field] !== undefined) return fail(`${at(field)} is not supported in text-to-video mode`);
    }
    if (input.mode === 'image-to-video') {
      if (!has(input, 'image_urls'))
        return fail(`${at('image_urls')} is required in image-to-video mode (1 to 2 URLs)`);
      if (input.image_urls!.length > 2)
        return fail(`${at('image_urls')} must hold 1 to 2 URLs in image-to-video mode`);
      for (const field of MEDIA.slice(1))
        if (input[field] !== undefined) return fail(`${at(field)} is not supported in image-to-video mode`);
    }
    if (input.mode === 'reference-to-video') {
      if (!MEDIA.some((field) => has(input, field))) {
        return fail(
          `input must carry at least one of ${MEDIA.map(at).join(', ')} in reference-to-video mode`,
        );
      }
      if (input.file_urls && input.link_urls)
        return fail(`${at('file_urls')} and ${at('link_urls')} cannot be used together`);
    }
  });

type Input = z.output<typeof schema>;

async function probeAll(
  field: 'video_urls' | 'audio_urls',
  urls: string[] | undefined,
  probe: (url: string) => Promise<{ durationSeconds: number }>,
) {
  const list = urls ?? [];
  const seconds = await Promise.all(
    list.map(async (url, i) => {
      try {
        return (await probe(url)).durationSeconds;
      } catch (err) {
        throw new ApiError(
          'invalid_request',
          `${at(field)}[${i}]: cannot read media at ${url}: ${(err as Error).message}`,
        );
      }
    }),
  );
  seconds.forEach((s, i) => {
    if (s < MEDIA_SECONDS.min || s > MEDIA_SECONDS.max) {
      throw new ApiError(
        'invalid_request',
        `${at(field)}[${i}] must be 1 to 15 seconds long (${list[i]} is ${s.toFixed(3)} s)`,
      );
    }
  });
  const totalMs = seconds.reduce((sum, s) => sum + toMillis(s), 0);
  if (totalMs > MEDIA_SECONDS.total * 1000) {
    throw new ApiError(
      'invalid_request',
      `${at(field)} must total at most 15 seconds (they total ${(totalMs / 1000).toFixed(3)} s)`,
    );
  }
  return { seconds, totalMs };
}

export const multimodalVideo: FamilyDefinition<typeof schema> = {
  family: 'multimodal-video',
  category: 'video',
  displayName: 'Multimodal video',
  schema,
  failCodes: [
    'SensitiveContent',
    'PromptInvalid',
    'ImageFormatIncorrect',
    'RateLimited',
    'Timeout',
    'Unknown error',
  ],
  pricing: {
    unit: 'second',
    usdPerSecond: RATE_USD,
    rules: [
      'text-to-video and image-to-video with a positive duration: duration x rate',
      'reference-to-video with a positive duration: (input video seconds + duration) x rate',
      'duration -1: pre-charge (input video seconds + 30) x rate; settled to (input + actual output seconds) x rate, the difference refunded',
      'images, audio, files and links add no seconds',
    ],
  },
  polling: [
    { workload: 'text or image to video', firstPollSeconds: 60, intervalSeconds: [10, 15] },
    { workload: 'reference to video', firstPollSeconds: [60, 90], intervalSeconds: [10, 15] },
  ],
  async plan(input: Input, { probe }) {
    const rate = RATE_MICROS[input.resolution];
    const videos =
      input.mode === 'reference-to-video'
        ? await probeAll('video_urls', input.video_urls, probe)
        : { seconds: [], totalMs: 0 };
    if (input.mode === 'reference-to-video') await probeAll('audio_urls', input.audio_urls, probe);
    if (input.duration > 0 && videos.totalMs + input.duration * 1000 > 30_000) {
      throw new ApiError(
        'invalid_request',
        `${at('duration')} plus the reference video seconds must be at most 30 (${input.duration} + ${(videos.totalMs / 1000).toFixed(3)})`,
      );
    }
    const polling = { firstPollSeconds: 60, intervalSeconds: 10 };
    const normalized: Record<string, unknown> = { ...input };
    if (input.duration === -1) {
      return {
        input: normalized,
        chargeMicros: perSecondMicros(rate, videos.totalMs + SMART_PRECHARGE_OUTPUT_SECONDS * 1000),
        output: { kind: 'video' },
        settlement: {
          ratePerSecondMicros: rate,
          inputVideoSeconds: videos.totalMs / 1000,
          inputVideoCount: videos.seconds.length,
        },
        polling,
      };
    }
    return {
      input: normalized,
      chargeMicros: perSecondMicros(rate, videos.totalMs + input.duration * 1000),
      output: { kind: 'video', seconds: input.duration },
      polling,
    };
  },
  settle: settleSmartDuration,
};
