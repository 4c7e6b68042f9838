import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { TaskModel } from '../../catalog/types';
import { assetPath } from '../../paths';
import type { Clock } from '../../clock';
import { RESULT_URL_LIFETIME_MS, type FileSigner } from '../../files/signer';
import type { TaskRecord } from '../../tasks/types';
import type { JobProgress, Provider } from '../types';

/** Prompt markers that drive the sandbox (DESIGN.md). */
const FAIL = /\[sandbox:fail=([^\]]+)\]/;
const DELAY = /\[sandbox:delay=(\d{1,8})\]/;
const OUTPUT_SECONDS = /\[sandbox:output_seconds=(\d{1,2}(?:\.\d{1,3})?)\]/;
const MAX_DELAY_MS = 3_600_000;

export interface SandboxPlan {
  delayMs: number;
  outcome:
    | { state: 'success'; media: PlaceholderKind; outputSeconds?: number }
    | { state: 'failed'; failCode: string; failMsg: string };
}

export type PlaceholderKind = 'png' | 'jpg' | 'mp4' | 'mp3';

const MEDIA_DIR = assetPath('providers', 'sandbox', 'media');
const CONTENT_TYPES: Record<PlaceholderKind, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  mp4: 'video/mp4',
  mp3: 'audio/mpeg',
};

/** The placeholder files, read once at start. */
export const placeholders: Record<PlaceholderKind, { bytes: Buffer; contentType: string }> =
  Object.fromEntries(
    (Object.keys(CONTENT_TYPES) as PlaceholderKind[]).map((kind) => [
      kind,
      {
        bytes: fs.readFileSync(path.join(MEDIA_DIR, `placeholder.${kind}`)),
        contentType: CONTENT_TYPES[kind],
      },
    ]),
  ) as Record<PlaceholderKind, { bytes: Buffer; contentType: string }>;

/** A stable "actual" output length of 2 to 30 s for a smart-duration task, derived from its prompt. */
function derivedOutputSeconds(prompt: string): number {
  return 2 + (createHash('sha256').update(prompt).digest().readUInt32BE(0) % 29);
}

/** What the sandbox will do with a task: when it finishes and how, from the markers in its prompt. */
export function planSandbox(task: TaskRecord, model: TaskModel, defaultDelayMs: number): SandboxPlan {
  const prompt = typeof task.prepared.input.prompt === 'string' ? task.prepared.input.prompt : '';
  const delay = DELAY.exec(prompt);
  const delayMs = delay ? Math.min(Number(delay[1]), MAX_DELAY_MS) : defaultDelayMs;
  const fail = FAIL.exec(prompt);
  if (fail) {
    const requested = fail[1].trim();
    const known = model.failCodes.includes(requested);
    return {
      delayMs,
      outcome: {
        state: 'failed',
        failCode: known ? requested : model.failCodes[model.failCodes.length - 1],
        failMsg: known
          ? `Sandbox failure ${requested} requested by the prompt marker`
          : `Sandbox failure requested with unknown code ${requested.slice(0, 64)}`,
      },
    };
  }
  const kind = task.prepared.output.kind;
  const media: PlaceholderKind =
    kind === 'video'
      ? 'mp4'
      : kind === 'audio'
        ? 'mp3'
        : task.prepared.input.output_format === 'jpeg'
          ? 'jpg'
          : 'png';
  let outputSeconds = task.prepared.output.seconds;
  if (task.prepared.settlement) {
    const marker = OUTPUT_SECONDS.exec(prompt);
    outputSeconds = marker ? Number(marker[1]) : derivedOutputSeconds(prompt);
  }
  return { delayMs, outcome: { state: 'success', media, outputSeconds } };
}

/**
 * The built-in sandbox: no upstream, no I/O. A task is "running" until its planned delay has passed, and its
 * outcome comes from the prompt markers; a success serves a signed URL to a real placeholder file.
 */
export function sandboxProvider(deps: { signer: FileSigner; clock: Clock; delayMs: number }): Provider {
  return {
    startsInline: true,
    start: (task, model) => ({ firstCheckMs: planSandbox(task, model, deps.delayMs).delayMs }),
    async check(task, model): Promise<JobProgress> {
      const { outcome } = planSandbox(task, model, deps.delayMs);
      if (outcome.state === 'failed') return outcome;
      const at = deps.clock.now();
      const url = deps.signer.url(task.taskId, `0.${outcome.media}`, at + RESULT_URL_LIFETIME_MS);
      return { state: 'success', resultUrls: [url], outputSeconds: outcome.outputSeconds };
    },
    // Nothing runs anywhere: a cancelled task's scheduled check finds it terminal and ends there.
    cancel: async () => undefined,
    // Never asked: a sandbox check is always terminal.
    checkIntervalMs: () => deps.delayMs,
  };
}
