import { createCatalog } from '../../src/catalog';
import { jsonSchemaOf } from '../../src/catalog/family';
import { imageGen } from '../../src/catalog/families/image-gen';
import { loadConfig } from '../../src/config';
import { ApiError } from '../../src/errors';

const catalog = createCatalog(loadConfig({ env: {} }).models);

/** Media durations by URL, standing in for the network probe (the real probe has its own tests). */
const DURATIONS: Record<string, number> = {
  'https://m.test/v0_9.mp4': 0.9,
  'https://m.test/v1.mp4': 1,
  'https://m.test/v5.mp4': 5,
  'https://m.test/v7_5.mp4': 7.5,
  'https://m.test/v10.mp4': 10,
  'https://m.test/v15.mp4': 15,
  'https://m.test/v15_1.mp4': 15.1,
  'https://m.test/a0_9.wav': 0.9,
  'https://m.test/a1.wav': 1,
  'https://m.test/a8.wav': 8,
  'https://m.test/a16.wav': 16,
};
const probe = async (url: string) => {
  if (!(url in DURATIONS)) throw new Error('not reachable: HTTP 404');
  return { durationSeconds: DURATIONS[url] };
};

async function prepare(model: string, input: unknown) {
  return catalog.get(model)!.prepare(input, { probe });
}
async function rejection(model: string, input: unknown): Promise<string> {
  try {
    await prepare(model, input);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    return (err as ApiError).message;
  }
  throw new Error(`accepted: ${JSON.stringify(input)}`);
}

const img = 'https://img.test/a.png';
const t2v = { mode: 'text-to-video', prompt: 'waves' };

type Case = [string, Record<string, unknown>, string | null];

describe('multimodal-video bounds', () => {
  const cases: Case[] = [
    ['duration 2 (lowest)', { ...t2v, duration: 2 }, null],
    ['duration 1', { ...t2v, duration: 1 }, 'input.duration must be -1 or an integer from 2 to 30'],
    ['duration 30 (highest)', { ...t2v, duration: 30 }, null],
    ['duration 31', { ...t2v, duration: 31 }, 'input.duration must be -1 or an integer from 2 to 30'],
    ['duration -1', { ...t2v, duration: -1 }, null],
    ['duration -2', { ...t2v, duration: -2 }, 'input.duration must be -1 or an integer from 2 to 30'],
    ['duration 0', { ...t2v, duration: 0 }, 'input.duration must be -1 or an integer from 2 to 30'],
    ['duration "10"', { ...t2v, duration: '10' }, null],
    ['duration "-1"', { ...t2v, duration: '-1' }, null],
    ['duration "-1.0"', { ...t2v, duration: '-1.0' }, 'input.duration must be -1 or an integer from 2 to 30'],
    ['duration "6.5"', { ...t2v, duration: '6.5' }, 'input.duration must be -1 or an integer from 2 to 30'],
    ['duration 6.5', { ...t2v, duration: 6.5 }, 'input.duration must be -1 or an integer from 2 to 30'],
    ['duration true', { ...t2v, duration: true }, 'input.duration must be -1 or an integer from 2 to 30'],
    ['prompt of 20000', { ...t2v, prompt: 'x'.repeat(20_000) }, null],
    [
      'prompt of 20001',
      { ...t2v, prompt: 'x'.repeat(20_001) },
      'input.prompt must be at most 20000 characters',
    ],
    [
      'blank prompt',
      { ...t2v, prompt: '   ' },
      'input.prompt is required and must not be empty in text-to-video mode',
    ],
    [
      'no prompt',
      { mode: 'text-to-video' },
      'input.prompt is required and must not be empty in text-to-video mode',
    ],
    ['no mode', { prompt: 'x' }, 'input.mode is required'],
    [
      'bad mode',
      { ...t2v, mode: 'video' },
      'input.mode must be one of text-to-video, image-to-video, reference-to-video',
    ],
    ['bad resolution', { ...t2v, resolution: '4k' }, 'input.resolution must be one of 480p, 720p, 1080p'],
    [
      'bad aspect_ratio',
      { ...t2v, aspect_ratio: '21:9' },
      'input.aspect_ratio must be one of auto, 16:9, 4:3, 1:1, 3:4, 9:16',
    ],
    ['ratio is not a field', { ...t2v, ratio: '16:9' }, 'input.ratio is not a field of this model'],
    ['seed 0', { ...t2v, seed: 0 }, null],
    ['seed -1', { ...t2v, seed: -1 }, 'input.seed must be an integer from 0 to 2147483647'],
    ['seed 2147483647', { ...t2v, seed: 2_147_483_647 }, null],
    [
      'seed 2147483648',
      { ...t2v, seed: 2_147_483_648 },
      'input.seed must be an integer from 0 to 2147483647',
    ],
    [
      'images in t2v',
      { ...t2v, image_urls: [img] },
      'input.image_urls is not supported in text-to-video mode',
    ],
    [
      'i2v without images',
      { mode: 'image-to-video' },
      'input.image_urls is required in image-to-video mode (1 to 2 URLs)',
    ],
    ['i2v with 2 images', { mode: 'image-to-video', image_urls: [img, img] }, null],
    [
      'i2v with 3 images',
      { mode: 'image-to-video', image_urls: [img, img, img] },
      'input.image_urls must hold 1 to 2 URLs in image-to-video mode',
    ],
    [
      'i2v with video',
      { mode: 'image-to-video', image_urls: [img], video_urls: ['https://m.test/v5.mp4'] },
      'input.video_urls is not supported in image-to-video mode',
    ],
    [
      'r2v with nothing',
      { mode: 'reference-to-video' },
      'input must carry at least one of input.image_urls, input.video_urls, input.audio_urls, input.file_urls, input.link_urls in reference-to-video mode',
    ],
    ['r2v with 10 images', { mode: 'reference-to-video', image_urls: Array(10).fill(img) }, null],
    [
      'r2v with 11 images',
      { mode: 'reference-to-video', image_urls: Array(11).fill(img) },
      'input.image_urls must hold 1 to 10 URLs',
    ],
    [
      'r2v with 6 videos',
      { mode: 'reference-to-video', video_urls: Array(6).fill('https://m.test/v1.mp4') },
      'input.video_urls must hold 1 to 5 URLs',
    ],
    [
      'file and link',
      { mode: 'reference-to-video', file_urls: [img], link_urls: [img] },
      'input.file_urls and input.link_urls cannot be used together',
    ],
    [
      '2 files',
      { mode: 'reference-to-video', file_urls: [img, img] },
      'input.file_urls must hold exactly 1 URL',
    ],
    ['video of 1 s', { mode: 'reference-to-video', video_urls: ['https://m.test/v1.mp4'] }, null],
    [
      'video of 0.9 s',
      { mode: 'reference-to-video', video_urls: ['https://m.test/v0_9.mp4'] },
      'input.video_urls[0] must be 1 to 15 seconds long (https://m.test/v0_9.mp4 is 0.900 s)',
    ],
    ['video of 15 s', { mode: 'reference-to-video', video_urls: ['https://m.test/v15.mp4'] }, null],
    [
      'video of 15.1 s',
      { mode: 'reference-to-video', video_urls: ['https://m.test/v15_1.mp4'] },
      'input.video_urls[0] must be 1 to 15 seconds long (https://m.test/v15_1.mp4 is 15.100 s)',
    ],
    [
      'videos totalling 15 s',
      { mode: 'reference-to-video', video_urls: ['https://m.test/v10.mp4', 'https://m.test/v5.mp4'] },
      null,
    ],
    [
      'videos totalling 17.5 s',
      { mode: 'reference-to-video', video_urls: ['https://m.test/v10.mp4', 'https://m.test/v7_5.mp4'] },
      'input.video_urls must total at most 15 seconds (they total 17.500 s)',
    ],
    [
      'audio of 0.9 s',
      { mode: 'reference-to-video', audio_urls: ['https://m.test/a0_9.wav'] },
      'input.audio_urls[0] must be 1 to 15 seconds long (https://m.test/a0_9.wav is 0.900 s)',
    ],
    [
      'audio of 16 s',
      { mode: 'reference-to-video', audio_urls: ['https://m.test/a16.wav'] },
      'input.audio_urls[0] must be 1 to 15 seconds long (https://m.test/a16.wav is 16.000 s)',
    ],
    [
      'audio totalling 16 s',
      { mode: 'reference-to-video', audio_urls: ['https://m.test/a8.wav', 'https://m.test/a8.wav'] },
      'input.audio_urls must total at most 15 seconds (they total 16.000 s)',
    ],
    [
      'unreachable media',
      { mode: 'reference-to-video', video_urls: ['https://m.test/missing.mp4'] },
      'input.video_urls[0]: cannot read media at https://m.test/missing.mp4: not reachable: HTTP 404',
    ],
    [
      '15 s video + duration 15 = 30',
      { mode: 'reference-to-video', video_urls: ['https://m.test/v15.mp4'], duration: 15 },
      null,
    ],
    [
      '15 s video + duration 16 > 30',
      { mode: 'reference-to-video', video_urls: ['https://m.test/v15.mp4'], duration: 16 },
      'input.duration plus the reference video seconds must be at most 30 (16 + 15.000)',
    ],
    [
      '15 s video + duration -1',
      { mode: 'reference-to-video', video_urls: ['https://m.test/v15.mp4'], duration: -1 },
      null,
    ],
  ];
  test.each(cases)('%s', async (_name, input, message) => {
    if (message === null) await expect(prepare('multimodal-video', input)).resolves.toBeDefined();
    else expect(await rejection('multimodal-video', input)).toBe(message);
  });

  test('defaults', async () => {
    expect((await prepare('multimodal-video', t2v)).input).toEqual({
      ...t2v,
      resolution: '1080p',
      aspect_ratio: 'auto',
      duration: 5,
      sound: true,
      watermark: false,
    });
  });
});

describe('first-frame-video bounds', () => {
  const std = { mode: 'standard-text-to-video', prompt: 'x', duration: 6 };
  const cases: Case[] = [
    ['duration 6', std, null],
    ['duration 10', { ...std, duration: 10 }, null],
    ['duration "6"', { ...std, duration: '6' }, null],
    ['duration "10"', { ...std, duration: '10' }, null],
    ['duration 8', { ...std, duration: 8 }, 'input.duration must be 6 or 10 in standard modes'],
    ['duration "6.0"', { ...std, duration: '6.0' }, 'input.duration must be 6 or 10 in standard modes'],
    [
      'standard without duration',
      { mode: 'standard-text-to-video', prompt: 'x' },
      'input.duration is required',
    ],
    ['pro ignores duration', { mode: 'pro-text-to-video', prompt: 'x', duration: 99 }, null],
    ['prompt of 2000 bytes', { ...std, prompt: 'x'.repeat(2000) }, null],
    [
      'prompt of 2001 bytes',
      { ...std, prompt: 'x'.repeat(2001) },
      'input.prompt must be at most 2000 UTF-8 bytes',
    ],
    ['1000 two-byte characters = 2000 bytes', { ...std, prompt: 'é'.repeat(1000) }, null],
    [
      '667 three-byte characters = 2001 bytes',
      { ...std, prompt: '€'.repeat(667) },
      'input.prompt must be at most 2000 UTF-8 bytes',
    ],
    ['empty prompt', { ...std, prompt: '' }, 'input.prompt must not be empty'],
    ['no prompt', { mode: 'pro-text-to-video' }, 'input.prompt is required'],
    [
      'bad mode',
      { ...std, mode: 'standard' },
      'input.mode must be one of standard-text-to-video, standard-image-to-video, pro-text-to-video, pro-image-to-video',
    ],
    ['image mode with 1 image', { mode: 'pro-image-to-video', prompt: 'x', image_urls: [img] }, null],
    [
      'image mode without images',
      { mode: 'pro-image-to-video', prompt: 'x' },
      'input.image_urls must hold exactly 1 non-empty URL in pro-image-to-video mode',
    ],
    [
      'image mode with 0 images',
      { mode: 'standard-image-to-video', prompt: 'x', duration: 6, image_urls: [] },
      'input.image_urls must hold exactly 1 non-empty URL in standard-image-to-video mode',
    ],
    [
      'image mode with 2 images',
      { mode: 'pro-image-to-video', prompt: 'x', image_urls: [img, img] },
      'input.image_urls must hold exactly 1 non-empty URL in pro-image-to-video mode',
    ],
    ['text mode ignores images', { ...std, image_urls: [img, img] }, null],
  ];
  test.each(cases)('%s', async (_name, input, message) => {
    if (message === null) await expect(prepare('first-frame-video', input)).resolves.toBeDefined();
    else expect(await rejection('first-frame-video', input)).toBe(message);
  });
});

describe('short-clip-video bounds', () => {
  const base = { mode: 'text-to-video', prompt: 'x', resolution: '720p', duration: 1 };
  const i2v = { mode: 'image-to-video', prompt: 'x', resolution: '720p', duration: 5, image_urls: [img] };
  const cases: Case[] = [
    ['duration 1', base, null],
    ['duration 0', { ...base, duration: 0 }, 'input.duration must be an integer from 1 to 16'],
    ['duration 16', { ...base, duration: 16 }, null],
    ['duration 17', { ...base, duration: 17 }, 'input.duration must be an integer from 1 to 16'],
    ['no duration', { mode: 'text-to-video', prompt: 'x', resolution: '720p' }, 'input.duration is required'],
    ['no resolution', { mode: 'text-to-video', prompt: 'x', duration: 5 }, 'input.resolution is required'],
    ['bad resolution', { ...base, resolution: '480p' }, 'input.resolution must be one of 540p, 720p, 1080p'],
    ['no mode', { prompt: 'x', resolution: '720p', duration: 5 }, 'input.mode is required'],
    ['prompt of 5000', { ...base, prompt: 'x'.repeat(5000) }, null],
    ['prompt of 5001', { ...base, prompt: 'x'.repeat(5001) }, 'input.prompt must be at most 5000 characters'],
    ['blank prompt', { ...base, prompt: ' \n' }, 'input.prompt must not be empty'],
    ['non-string prompt', { ...base, prompt: 5 }, 'input.prompt must be a string'],
    ['bad style', { ...base, style: 'noir' }, 'input.style must be one of general, anime'],
    [
      'bad aspect_ratio',
      { ...base, aspect_ratio: '21:9' },
      'input.aspect_ratio must be one of 16:9, 9:16, 4:3, 3:4, 1:1',
    ],
    [
      'bad movement',
      { ...base, movement: 'huge' },
      'input.movement must be one of auto, small, medium, large',
    ],
    ['seed -1', { ...base, seed: -1 }, null],
    ['seed -2', { ...base, seed: -2 }, 'input.seed must be an integer from -1 to 2147483647'],
    [
      'seed 2147483648',
      { ...base, seed: 2_147_483_648 },
      'input.seed must be an integer from -1 to 2147483647',
    ],
    ['i2v with 2 images', { ...i2v, image_urls: [img, img] }, null],
    [
      'i2v without images',
      { ...i2v, image_urls: undefined },
      'input.image_urls is required in image-to-video mode (1 to 2 URLs)',
    ],
    ['i2v with 0 images', { ...i2v, image_urls: [] }, 'input.image_urls must hold 1 to 2 URLs'],
    ['i2v with 3 images', { ...i2v, image_urls: [img, img, img] }, 'input.image_urls must hold 1 to 2 URLs'],
    ['i2v with a non-string image', { ...i2v, image_urls: [7] }, 'input.image_urls must hold URL strings'],
    [
      'turbo without images',
      { ...i2v, mode: 'turbo-image-to-video', image_urls: undefined },
      'input.image_urls is required in turbo-image-to-video mode (1 to 2 URLs)',
    ],
    [
      'style in an image mode',
      { ...i2v, style: 'anime' },
      'input.style is only supported in text-to-video mode',
    ],
  ];
  test.each(cases)('%s', async (_name, input, message) => {
    if (message === null) await expect(prepare('short-clip-video', input)).resolves.toBeDefined();
    else expect(await rejection('short-clip-video', input)).toBe(message);
  });

  test('aspect_ratio defaults to 4:3 in text-to-video', async () => {
    expect((await prepare('short-clip-video', base)).input.aspect_ratio).toBe('4:3');
  });
});

describe('image-gen bounds', () => {
  const base = { mode: 'text-to-image', prompt: 'x' };
  const cases: Case[] = [
    ['prompt of 1', base, null],
    ['empty prompt', { ...base, prompt: '' }, 'input.prompt must not be empty'],
    ['prompt of 20000', { ...base, prompt: 'x'.repeat(20_000) }, null],
    [
      'prompt of 20001',
      { ...base, prompt: 'x'.repeat(20_001) },
      'input.prompt must be at most 20000 characters',
    ],
    ['i2i with 16 images', { mode: 'image-to-image', prompt: 'x', image_urls: Array(16).fill(img) }, null],
    [
      'i2i with 17 images',
      { mode: 'image-to-image', prompt: 'x', image_urls: Array(17).fill(img) },
      'input.image_urls must hold 1 to 16 URLs',
    ],
    [
      'i2i without images',
      { mode: 'image-to-image', prompt: 'x' },
      'input.image_urls is required in image-to-image mode (1 to 16 URLs)',
    ],
    [
      'i2i with a malformed URL',
      { mode: 'image-to-image', prompt: 'x', image_urls: ['not a url'] },
      'input.image_urls must hold http(s) URLs',
    ],
    ['bad quality', { ...base, quality: 'ultra' }, 'input.quality must be one of low, medium, high'],
    ['bad resolution', { ...base, resolution: '8k' }, 'input.resolution must be one of 1k, 2k, 4k'],
    ['size as a ratio', { ...base, size: '16:9' }, null],
    [
      'bad size',
      { ...base, size: 'big' },
      'input.size must be an aspect ratio (auto, 1:1, 1:2, 2:1, 2:3, 3:2, 4:3, 3:4, 4:5, 5:4, 16:9, 9:16, 21:9) or a custom WIDTHxHEIGHT',
    ],
    ['custom 1024x640 at 2k (655360 px)', { ...base, size: '1024x640', resolution: '2k' }, null],
    [
      'custom 1008x640 (645120 px)',
      { ...base, size: '1008x640', resolution: '2k' },
      'input.size 1008x640: total pixels must be between 655360 and 8294400 (it has 645120)',
    ],
    ['custom 3840x2160 at 4k (8294400 px)', { ...base, size: '3840x2160', resolution: '4k' }, null],
    [
      'custom 3840x2176 (8355840 px)',
      { ...base, size: '3840x2176', resolution: '4k' },
      'input.size 3840x2176: total pixels must be between 655360 and 8294400 (it has 8355840)',
    ],
    [
      'custom edge 3856',
      { ...base, size: '3856x1280', resolution: '4k' },
      'input.size 3856x1280: neither edge may exceed 3840',
    ],
    [
      'custom not divisible by 16',
      { ...base, size: '1000x1000', resolution: '2k' },
      'input.size 1000x1000: width and height must be divisible by 16',
    ],
    ['custom ratio 3:1', { ...base, size: '2400x800', resolution: '2k' }, null],
    [
      'custom ratio over 3:1',
      { ...base, size: '2416x800', resolution: '2k' },
      'input.size 2416x800: aspect ratio must be at most 3:1',
    ],
    [
      'custom at 1k',
      { ...base, size: '1024x1024', resolution: '1k' },
      'input.resolution must be 2k or 4k with a custom size (got 1k)',
    ],
    [
      'custom at default resolution',
      { ...base, size: '1024x1024' },
      'input.resolution must be 2k or 4k with a custom size (got 1k)',
    ],
  ];
  test.each(cases)('%s', async (_name, input, message) => {
    if (message === null) await expect(prepare('image-gen', input)).resolves.toBeDefined();
    else expect(await rejection('image-gen', input)).toBe(message);
  });
});

describe('common category models', () => {
  test.each([
    ['basic-image', { prompt: 'x' }, null],
    ['basic-image', { prompt: 'x'.repeat(5001) }, 'input.prompt must be at most 5000 characters'],
    [
      'basic-image',
      { mode: 'image-to-image', prompt: 'x', image_urls: Array(6).fill(img) },
      'input.image_urls must hold 1 to 5 URLs',
    ],
    ['basic-video', { prompt: 'x', duration: 5 }, null],
    ['basic-video', { prompt: 'x' }, 'input.duration is required'],
    ['music', { mode: 'V4_5PLUS', prompt: 'x' }, null],
    ['music', { mode: 'V3', prompt: 'x' }, 'input.mode must be one of V4, V4_5, V4_5PLUS, V5'],
  ] as [string, Record<string, unknown>, string | null][])('%s %j', async (model, input, message) => {
    if (message === null) await expect(prepare(model, input)).resolves.toBeDefined();
    else expect(await rejection(model, input)).toBe(message);
  });
});

describe('prices, exactly, in micro-USD', () => {
  const charge = async (model: string, input: Record<string, unknown>) =>
    (await prepare(model, input)).chargeMicros;

  test.each([
    ['480p', 70_000],
    ['720p', 120_000],
    ['1080p', 225_000],
  ])(
    'multimodal %s: duration x rate, reference seconds added, smart duration pre-charges +30',
    async (resolution, rate) => {
      expect(await charge('multimodal-video', { ...t2v, resolution, duration: 10 })).toBe(10 * rate);
      expect(
        await charge('multimodal-video', {
          mode: 'image-to-video',
          image_urls: [img],
          resolution,
          duration: 7,
        }),
      ).toBe(7 * rate);
      expect(
        await charge('multimodal-video', {
          mode: 'reference-to-video',
          video_urls: ['https://m.test/v7_5.mp4'],
          resolution,
          duration: 5,
        }),
      ).toBe(12.5 * rate);
      expect(
        await charge('multimodal-video', {
          mode: 'reference-to-video',
          video_urls: ['https://m.test/v7_5.mp4'],
          audio_urls: ['https://m.test/a8.wav'],
          image_urls: [img],
          resolution,
          duration: 5,
        }),
      ).toBe(12.5 * rate); // images and audio add no seconds
      expect(await charge('multimodal-video', { ...t2v, resolution, duration: -1 })).toBe(30 * rate);
      expect(
        await charge('multimodal-video', {
          mode: 'reference-to-video',
          video_urls: ['https://m.test/v7_5.mp4'],
          resolution,
          duration: -1,
        }),
      ).toBe(37.5 * rate);
    },
  );

  test('first-frame: standard 0.056/s x duration, pro 0.49 flat', async () => {
    expect(
      await charge('first-frame-video', { mode: 'standard-text-to-video', prompt: 'x', duration: 6 }),
    ).toBe(336_000);
    expect(
      await charge('first-frame-video', {
        mode: 'standard-image-to-video',
        prompt: 'x',
        duration: '10',
        image_urls: [img],
      }),
    ).toBe(560_000);
    expect(await charge('first-frame-video', { mode: 'pro-text-to-video', prompt: 'x' })).toBe(490_000);
    expect(
      await charge('first-frame-video', { mode: 'pro-image-to-video', prompt: 'x', image_urls: [img] }),
    ).toBe(490_000);
  });

  test.each([
    ['text-to-video', '540p', 70_000],
    ['text-to-video', '720p', 150_000],
    ['text-to-video', '1080p', 160_000],
    ['image-to-video', '540p', 70_000],
    ['image-to-video', '720p', 150_000],
    ['image-to-video', '1080p', 160_000],
    ['turbo-image-to-video', '540p', 40_000],
    ['turbo-image-to-video', '720p', 60_000],
    ['turbo-image-to-video', '1080p', 80_000],
  ])('short-clip %s %s', async (mode, resolution, rate) => {
    const input = {
      mode,
      prompt: 'x',
      resolution,
      duration: 7,
      ...(mode === 'text-to-video' ? {} : { image_urls: [img] }),
    };
    expect(await charge('short-clip-video', input)).toBe(7 * rate);
  });

  test.each([
    ['low', '1k', 30_000],
    ['low', '2k', 40_000],
    ['low', '4k', 55_000],
    ['medium', '1k', 42_400],
    ['medium', '2k', 44_800],
    ['medium', '4k', 80_800],
    ['high', '1k', 168_800],
    ['high', '2k', 177_600],
    ['high', '4k', 320_800],
  ])('image %s %s', async (quality, resolution, micros) => {
    expect(
      await charge('image-gen', {
        mode: 'text-to-image',
        prompt: 'x',
        quality,
        resolution,
        aspect_ratio: '16:9',
      }),
    ).toBe(micros);
  });

  test('image without quality is billed as medium', async () => {
    expect(await charge('image-gen', { mode: 'text-to-image', prompt: 'x' })).toBe(42_400);
  });

  test.each([
    [{ aspect_ratio: '16:9' }, '4k'],
    [{ aspect_ratio: '9:16' }, '4k'],
    [{ aspect_ratio: '21:9' }, '4k'],
    [{ aspect_ratio: '1:2' }, '4k'],
    [{ aspect_ratio: '2:1' }, '4k'],
    [{ aspect_ratio: '1:1' }, '2k'],
    [{ aspect_ratio: '4:3' }, '2k'],
    [{}, '2k'], // auto
    [{ aspect_ratio: '16:9', size: '1:1' }, '2k'], // size wins
    [{ aspect_ratio: '1:1', size: '16:9' }, '4k'],
    [{ size: '3840x1280' }, '4k'],
    [{ size: '1280x3840' }, '4k'],
    [{ size: '2048x2048' }, '2k'],
  ])('4k to 2k: %j is billed as %s', async (extra, tier) => {
    const prepared = await prepare('image-gen', {
      mode: 'text-to-image',
      prompt: 'x',
      quality: 'high',
      resolution: '4k',
      ...extra,
    });
    expect(prepared.input.resolution).toBe(tier);
    expect(prepared.chargeMicros).toBe(tier === '4k' ? 320_800 : 177_600);
    expect(prepared.polling.firstPollSeconds).toBe(tier === '4k' ? 120 : 60);
  });

  test('smart-duration settlement: input + output seconds, half up at 3 decimals', () => {
    const model = catalog.get('multimodal-video')!;
    const settled = model.settle!(
      { ratePerSecondMicros: 225_000, inputVideoSeconds: 7.5, inputVideoCount: 1 },
      12.0004,
    );
    expect(settled.billing).toEqual({
      settlementState: 'final',
      inputVideoSeconds: 7.5,
      outputVideoSeconds: 12,
      totalBillableSeconds: 19.5,
      unit: 'second',
      rounding: 'round half up to 3 decimal places',
      inputVideoCount: 1,
      outputVideoCount: 1,
    });
    expect(settled.finalMicros).toBe(4_387_500);
    const halfUp = model.settle!(
      { ratePerSecondMicros: 70_000, inputVideoSeconds: 1.0005, inputVideoCount: 1 },
      2,
    );
    expect(halfUp.billing.inputVideoSeconds).toBe(1.001);
    expect(halfUp.billing.totalBillableSeconds).toBe(3.001);
    expect(halfUp.finalMicros).toBe(210_070);
  });
});

test('the JSON Schema is generated from the definition that validates', () => {
  const schema = catalog.get('image-gen')!.inputSchema;
  expect(schema).toEqual(jsonSchemaOf(imageGen.schema));
  expect(schema).toMatchObject({
    type: 'object',
    additionalProperties: false,
    properties: { resolution: { enum: ['1k', '2k', '4k'], default: '1k' } },
  });
});
