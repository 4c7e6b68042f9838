/**
 * npm run bench:reader — the metering reader on the answers too long to hold (src/gateway/usage.ts and
 * json-records.ts): batch results with megabytes of logprobs per line, a vLLM JSON body whose usage leads megabytes
 * of prompt logprobs, and a streamed image whose completed event carries megabytes of base64 before its usage. Each
 * is fed to `createUsageTap` in 16 KiB pieces (what a socket delivers), against a baseline measured in the same run:
 * `JSON.parse` of the same bytes held whole, line by line (the least a reader that holds what it reads would cost).
 * Bounded: BENCH_READER_ROUNDS (7) rounds per case, medians.
 */
import { createUsageTap } from '../src/gateway/usage';
import type { UsageFormat } from '../src/gateway/vendor';
import { openai } from '../src/gateway/vendors/openai';
import { machineNote, median, writeSection } from './lib';

const ROUNDS = Number(process.env.BENCH_READER_ROUNDS ?? 7);
const PIECE = 16 << 10;

const logprobs = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    [String(i)]: { logprob: -1.25, rank: 1, decoded_token: ` tok${i}` },
  }));
const base64 = (size: number) => 'iVBORw0KGgoAAAANSUhEUgAA+/9='.repeat(Math.ceil(size / 28)).slice(0, size);

interface Case {
  name: string;
  format: UsageFormat;
  contentType: string;
  bytes: Buffer;
  /** The JSON texts the baseline parses (each line, or each event's data). */
  texts: string[];
}

function cases(): Case[] {
  const line = JSON.stringify({
    custom_id: 'r',
    response: {
      body: {
        model: 'gpt-x',
        choices: [{ logprobs: { content: logprobs(120_000) } }],
        usage: { prompt_tokens: 10, completion_tokens: 20 },
      },
    },
  });
  const lines = Array.from({ length: 20 }, () => line);
  const vllm = JSON.stringify({
    id: 'c',
    choices: [],
    usage: { prompt_tokens: 7000, completion_tokens: 9 },
    prompt_logprobs: logprobs(120_000),
  });
  const completed = JSON.stringify({
    type: 'image_generation.completed',
    b64_json: base64(3 << 20),
    usage: { input_tokens: 50, output_tokens: 4160 },
  });
  return [
    {
      name: 'batch output, 20 lines of logprobs',
      format: openai.usage.batchOutput,
      contentType: 'application/octet-stream',
      bytes: Buffer.from(lines.map((l) => `${l}\n`).join('')),
      texts: lines,
    },
    {
      name: 'JSON body, usage ahead of prompt logprobs',
      format: openai.usage.chat,
      contentType: 'application/json',
      bytes: Buffer.from(vllm),
      texts: [vllm],
    },
    {
      name: 'streamed image, completed event of 3 MiB',
      format: openai.usage.images,
      contentType: 'text/event-stream',
      bytes: Buffer.from(`event: image_generation.completed\ndata: ${completed}\n\n`),
      texts: [completed],
    },
  ];
}

async function timed(work: () => unknown): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function main(): Promise<void> {
  const started = Date.now();
  const note = machineNote();
  const rows: string[] = [
    '| answer | MB | reader ms | baseline ms (JSON.parse held whole) | reader / baseline | usage read |',
    '| - | - | - | - | - | - |',
  ];
  for (const c of cases()) {
    const reader: number[] = [];
    const baseline: number[] = [];
    let read = '';
    for (let round = 0; round < ROUNDS; round++) {
      // Interleaved, so a stall of the machine lands on both alike.
      reader.push(
        await timed(async () => {
          const tap = createUsageTap(c.format, c.contentType, undefined)!;
          for (let i = 0; i < c.bytes.length; i += PIECE) tap.write(c.bytes.subarray(i, i + PIECE));
          const readings = await tap.finish();
          read = readings.map((r) => `${r.requests} × ${r.usage.input}/${r.usage.output}`).join(', ');
        }),
      );
      baseline.push(await timed(() => c.texts.map((t) => JSON.parse(t) as unknown)));
    }
    const r = median(reader);
    const b = median(baseline);
    rows.push(
      `| ${c.name} | ${(c.bytes.length / 1e6).toFixed(1)} | ${r.toFixed(1)} | ${b.toFixed(1)} | ${(r / b).toFixed(2)}x | ${read || 'none'} |`,
    );
  }
  const body = [
    `Each answer fed to \`createUsageTap\` in 16 KiB pieces; the baseline is \`JSON.parse\` of the same JSON texts held whole (what a reader holding them would pay at least, before the copies of holding them). Medians of ${ROUNDS} interleaved rounds. "usage read" is requests × input/output tokens as metered.`,
    '',
    note,
    '',
    ...rows,
    '',
    `Command: \`npm run bench:reader\` (${Math.round((Date.now() - started) / 1000)} s).`,
  ].join('\n');
  writeSection('Metering answers too long to hold', body);
  process.stdout.write(`${body}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
