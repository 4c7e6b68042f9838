import { api } from '../../api';
import { SelectField } from '../../components';
import { useLoad } from '../../hooks';
import type { FilterValue } from '../../lists';

/** Helpers shared by the task, batch, webhook and model pages. */

/** A task as GET /api/v1/tasks and GET /api/v1/tasks/{taskId} show it (src/tasks/views.ts). */
export interface TaskView {
  taskId: string;
  state: 'pending' | 'processing' | 'success' | 'failed' | string;
  model: string;
  createTime: number;
  completeTime?: number;
  costTime?: number;
  chargeUsd?: number;
  requestType?: string;
  resultJson?: string;
  failCode?: string;
  failMsg?: string;
  billing?: Record<string, unknown>;
  batchId?: string;
  clientItemId?: string;
  /** Shown when the API includes them (the view may grow). */
  input?: unknown;
  refundUsd?: number;
  [extra: string]: unknown;
}

export interface ModelSummary {
  id: string;
  slug: string | null;
  displayName: string;
  category: 'image' | 'video' | 'audio' | 'text' | string;
  integration_type: 'task_api' | 'llm_gateway' | string;
  [extra: string]: unknown;
}

export const isActiveState = (state: string | undefined) => state === 'pending' || state === 'processing';

/**
 * The result URLs of a successful task (its `resultJson` is a JSON string holding `resultUrls`): http(s) only, since
 * an upstream chooses them and a `javascript:` or `data:` link must never become a clickable href.
 */
export function resultUrls(task: { resultJson?: unknown }): string[] {
  if (typeof task.resultJson !== 'string') return [];
  try {
    const parsed = JSON.parse(task.resultJson) as { resultUrls?: unknown };
    return Array.isArray(parsed.resultUrls)
      ? parsed.resultUrls.filter((u): u is string => typeof u === 'string' && /^https?:\/\//i.test(u))
      : [];
  } catch {
    return [];
  }
}

export type MediaKind = 'image' | 'video' | 'audio' | 'file';

const EXTENSIONS: Record<string, MediaKind> = {
  png: 'image',
  jpg: 'image',
  jpeg: 'image',
  webp: 'image',
  gif: 'image',
  avif: 'image',
  mp4: 'video',
  webm: 'video',
  mov: 'video',
  m4v: 'video',
  mp3: 'audio',
  wav: 'audio',
  m4a: 'audio',
  ogg: 'audio',
  flac: 'audio',
  aac: 'audio',
};

/** The file extension of a URL's path, lower-case ('' when none). */
export function extensionOf(url: string): string {
  let pathname = url;
  try {
    pathname = new URL(url, location.href).pathname;
  } catch {
    pathname = url.split(/[?#]/)[0];
  }
  const match = /\.([a-z0-9]{2,5})$/i.exec(pathname);
  return match ? match[1].toLowerCase() : '';
}

/** What a result URL holds, by its extension, else by the model's category. */
export function mediaKindOf(url: string, category?: string): MediaKind {
  const kind = EXTENSIONS[extensionOf(url)];
  if (kind) return kind;
  return category === 'image' || category === 'video' || category === 'audio' ? category : 'file';
}

let modelsPromise: Promise<ModelSummary[]> | null = null;

/** The catalog (GET /api/v1/models), fetched once per page load; a failure is retried on the next call. */
export function loadModels(): Promise<ModelSummary[]> {
  if (!modelsPromise) {
    modelsPromise = api<ModelSummary[]>('/api/v1/models');
    modelsPromise.catch(() => (modelsPromise = null));
  }
  return modelsPromise;
}

/** Task-API models only (the ones tasks and batches run on). */
export async function loadTaskModels(): Promise<ModelSummary[]> {
  return (await loadModels()).filter((m) => m.integration_type === 'task_api');
}

/** The task-model filter of the task and batch lists; a model the URL names stays listed (it may be gone). */
export function ModelSelect({ id, value, onValue }: { id: string } & FilterValue) {
  const models = useLoad(loadTaskModels, []);
  const modelIds = (models.data ?? []).map((m) => m.id);
  if (value && !modelIds.includes(value)) modelIds.push(value);
  return (
    <SelectField id={id} label="Model" any="All models" options={modelIds} value={value} onValue={onValue} />
  );
}

/** Seconds or milliseconds for a duration given in ms. */
export function duration(msValue: number | undefined): string {
  if (msValue === undefined || msValue === null) return '—';
  if (msValue < 1000) return `${Math.round(msValue)} ms`;
  if (msValue < 120_000) return `${(msValue / 1000).toFixed(1)} s`;
  return `${Math.round(msValue / 60_000)} min`;
}
