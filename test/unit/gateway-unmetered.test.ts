import { VENDORS } from '../../src/gateway/vendors';

/**
 * Every route that runs a model either meters it (a usage format with token counts, or results billed when read) or
 * says why it cannot (`unmetered`: a priced model is refused there). What is left are the routes the vendors do not
 * bill by token: a new route that runs a model must land in one of the three, or this list changes in review.
 */
test('every route that runs a model is metered, refuses priced models, or is one the vendors do not bill', () => {
  const unbilled: string[] = [];
  for (const vendor of VENDORS) {
    for (const spec of vendor.routes) {
      if (spec.model === undefined || spec.unmetered !== undefined) continue;
      // Metered; or counted with no tokens reported, where the router refuses a priced model as on unmetered routes.
      if (spec.usage) continue;
      unbilled.push(`${vendor.name} ${spec.method} ${spec.path} (model in ${spec.model})`);
    }
  }
  expect(unbilled).toEqual([
    // Token counts: free at the vendor.
    'anthropic POST /v1/messages/count_tokens (model in body)',
    // Billed when its results are read (billOnce on the results route).
    'anthropic POST /v1/messages/batches (model in batch)',
    // Token counts: free at the vendor.
    'gemini POST /(v1beta|v1|v1alpha)/(models|tunedModels)/{model}:countTokens (model in path)',
    // Billed when the batch is read done (its record carries the results' usage format).
    'gemini POST /(v1beta|v1|v1alpha)/(models|tunedModels)/{model}:batchGenerateContent (model in path)',
    // The cache's storage is billed by the vendor by the hour; its answer reports only a token total.
    'gemini POST /(v1beta|v1|v1alpha)/cachedContents (model in body)',
    // Free at the vendor.
    'openai POST /v1/moderations (model in body)',
    'openai POST /v1/responses/input_tokens (model in body)',
    // Billed when its output file is read; its models are inside that file.
    'openai POST /v1/batches (model in hidden)',
  ]);
});
