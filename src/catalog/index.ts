import { ApiError } from '../errors';
import type { ModelEntry } from './config';
import type { FamilyDefinition } from './family';
import { jsonSchemaOf, parseInput } from './family';
import { basicImage, basicVideo, music } from './families/common';
import { firstFrameVideo } from './families/first-frame-video';
import { imageGen } from './families/image-gen';
import { multimodalVideo } from './families/multimodal-video';
import { shortClipVideo } from './families/short-clip-video';
import type { Catalog, TaskModel } from './types';

export * from './types';
export type { ModelEntry, ModelRoute } from './config';

const FAMILIES: Record<ModelEntry['family'], FamilyDefinition> = {
  'multimodal-video': multimodalVideo,
  'first-frame-video': firstFrameVideo,
  'short-clip-video': shortClipVideo,
  'image-gen': imageGen,
  'basic-image': basicImage,
  'basic-video': basicVideo,
  music,
} as Record<ModelEntry['family'], FamilyDefinition>;

function toTaskModel(entry: ModelEntry): TaskModel {
  const family = FAMILIES[entry.family];
  const inputSchema = jsonSchemaOf(family.schema);
  const displayName = entry.displayName ?? family.displayName;
  return {
    id: entry.id,
    slug: entry.slug,
    family: family.family,
    category: family.category,
    displayName,
    failCodes: family.failCodes,
    inputSchema,
    routes: entry.routes,
    prepare: async (input, context) => family.plan(parseInput(family.schema, input), context),
    settle: family.settle,
    describe: () => ({
      id: entry.id,
      slug: entry.slug ?? null,
      displayName,
      category: family.category,
      integration_type: 'task_api',
      family: family.family,
      endpoints: {
        submit: `POST /api/v1/generateTask/${entry.id}`,
        status: `GET /api/v1/statusTask/${entry.id}?taskId={taskId}`,
        batches: `POST /api/v1/generateTask/${entry.id}/batches`,
      },
      inputSchema,
      pricing: family.pricing,
      polling: family.polling,
      failCodes: family.failCodes,
    }),
  };
}

/** The task-model catalog, built once at start from the `models` config. */
/** The model a submit names in its path (task or batch); an unknown one is a 400 naming it, as the spec's submit lists. */
export function submittedModel(catalog: Catalog, modelId: string): TaskModel {
  const model = catalog.get(modelId);
  if (!model || model.id !== modelId)
    throw new ApiError('invalid_request', `model: unknown model ${modelId} (see GET /api/v1/models)`);
  return model;
}

export function createCatalog(entries: readonly ModelEntry[]): Catalog {
  const models = entries.map(toTaskModel);
  const byKey = new Map<string, TaskModel>();
  for (const model of models) {
    byKey.set(model.id, model);
    if (model.slug) byKey.set(model.slug, model);
  }
  return { get: (idOrSlug) => byKey.get(idOrSlug), list: () => models };
}
