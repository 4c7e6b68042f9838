import { emptyUsage, USAGE_FIELDS, type ModelUsage, type UsageStore } from '../../gateway/store';

export class MemoryUsageStore implements UsageStore {
  private readonly byKey = new Map<string, Map<string, ModelUsage>>();

  async add(keyId: string, model: string, more: ModelUsage): Promise<void> {
    let models = this.byKey.get(keyId);
    if (!models) this.byKey.set(keyId, (models = new Map()));
    let totals = models.get(model);
    if (!totals) models.set(model, (totals = emptyUsage()));
    for (const field of USAGE_FIELDS) totals[field] += more[field];
  }

  async get(keyId: string): Promise<Record<string, ModelUsage>> {
    return Object.fromEntries([...(this.byKey.get(keyId) ?? [])].map(([m, u]) => [m, { ...u }]));
  }
}
