import type { SecretVersion, WebhookSecretStore } from '../../webhooks/store';

interface AccountSecrets {
  versions: Map<number, SecretVersion>;
  current?: number;
  max: number;
  revokedAt?: number;
}

export class MemoryWebhookSecretStore implements WebhookSecretStore {
  private readonly accounts = new Map<string, AccountSecrets>();

  private of(accountId: string): AccountSecrets {
    let state = this.accounts.get(accountId);
    if (!state) this.accounts.set(accountId, (state = { versions: new Map(), max: 0 }));
    return state;
  }

  private create(state: AccountSecrets, ciphertext: string, at: number): SecretVersion {
    const record = { version: ++state.max, ciphertext, createdAt: at };
    state.versions.set(record.version, record);
    state.current = record.version;
    return { ...record };
  }

  async current(accountId: string, ciphertext: string, at: number): Promise<SecretVersion> {
    const state = this.of(accountId);
    if (state.current !== undefined) return { ...state.versions.get(state.current)! };
    return this.create(state, ciphertext, at);
  }

  async rotate(accountId: string, ciphertext: string, at: number): Promise<SecretVersion> {
    const state = this.of(accountId);
    if (state.current !== undefined) state.versions.get(state.current)!.retiredAt = at;
    return this.create(state, ciphertext, at);
  }

  async revoke(accountId: string, at: number): Promise<number> {
    const state = this.of(accountId);
    for (const v of state.versions.values()) v.revokedAt ??= at;
    state.current = undefined;
    state.revokedAt = at;
    return state.max;
  }

  async get(accountId: string, version: number): Promise<SecretVersion | null> {
    const v = this.accounts.get(accountId)?.versions.get(version);
    return v ? { ...v } : null;
  }

  async revokedAt(accountId: string): Promise<number | null> {
    return this.accounts.get(accountId)?.revokedAt ?? null;
  }
}
