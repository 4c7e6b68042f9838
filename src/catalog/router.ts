import express, { type Router } from 'express';
import { z } from 'zod';
import { ApiError, ok } from '../errors';
import { defineRoute } from '../http/routes';
import { parseOrThrow } from '../http/validate';
import { VENDORS } from '../gateway/vendors';
import type { Catalog, Category, IntegrationType } from './types';

interface ModelSummary {
  id: string;
  slug: string | null;
  displayName: string;
  category: Category;
  integration_type: IntegrationType;
  [extra: string]: unknown;
}

/** The LLM gateway's vendor formats, listed beside the task models (declared by each vendor module). */
const GATEWAY_ENTRIES: (ModelSummary & { describe: Record<string, unknown> })[] = VENDORS.flatMap((vendor) =>
  vendor.catalog.map((entry) => ({
    ...entry,
    category: 'text' as const,
    integration_type: 'llm_gateway' as const,
    vendor: vendor.name,
  })),
);

const listQuery = z.looseObject({
  category: z
    .enum(['image', 'video', 'audio', 'text'], { error: 'must be one of image, video, audio, text' })
    .optional(),
  integration_type: z
    .enum(['task_api', 'llm_gateway'], { error: 'must be one of task_api, llm_gateway' })
    .optional(),
});

/** GET /models and GET /models/{idOrSlug} (inside /api/v1: a key is required). */
export function modelsRouter({ catalog }: { catalog: Catalog }): Router {
  const router = express.Router();
  const taskSummaries: ModelSummary[] = catalog.list().map((m) => ({
    id: m.id,
    slug: m.slug ?? null,
    displayName: m.displayName,
    category: m.category,
    integration_type: 'task_api',
    family: m.family,
  }));
  const all = [...taskSummaries, ...GATEWAY_ENTRIES.map(({ describe: _d, ...summary }) => summary)];

  defineRoute(router, '/models', {
    get: (req, res) => {
      const query = parseOrThrow(listQuery, req.query, 'query');
      res.json(
        ok(
          all.filter(
            (m) =>
              (!query.category || m.category === query.category) &&
              (!query.integration_type || m.integration_type === query.integration_type),
          ),
        ),
      );
    },
  });
  defineRoute(router, '/models/:idOrSlug', {
    get: (req, res) => {
      const key = req.params.idOrSlug as string;
      const model = catalog.get(key);
      if (model) return void res.json(ok(model.describe()));
      const gateway = GATEWAY_ENTRIES.find((g) => g.id === key || g.slug === key);
      if (gateway) {
        const { describe, ...summary } = gateway;
        return void res.json(ok({ ...summary, ...describe }));
      }
      throw new ApiError('not_found', `No model ${key}`);
    },
  });
  return router;
}
