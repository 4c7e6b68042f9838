import { collectPage, indexMember, type Page, type PageRequest } from '../../listing';
import type { DeliveryAttempt, DeliveryLogStore } from '../../webhooks/store';
import { MemoryAccountIndex } from './account-index';

/** Embedded mode: attempts as JSON with their expiry, indexed per account; expired ones go as a list meets them. */
export class MemoryDeliveryLog implements DeliveryLogStore {
  private readonly attempts = new Map<string, { json: string; expiresAt: number }>();
  private readonly index = new MemoryAccountIndex();
  private readonly expiries: { accountId: string; member: string; deliveryId: string; at: number }[] = [];

  async record(attempt: DeliveryAttempt, retentionMs: number): Promise<void> {
    const expiresAt = attempt.at + retentionMs;
    const member = indexMember(attempt.at, attempt.deliveryId);
    this.attempts.set(attempt.deliveryId, { json: JSON.stringify(attempt), expiresAt });
    this.index.add(attempt.accountId, member);
    this.expiries.push({
      accountId: attempt.accountId,
      member,
      deliveryId: attempt.deliveryId,
      at: expiresAt,
    });
    this.sweep(attempt.at);
  }

  async get(deliveryId: string): Promise<DeliveryAttempt | null> {
    const found = this.attempts.get(deliveryId);
    return found ? (JSON.parse(found.json) as DeliveryAttempt) : null;
  }

  async list(
    accountId: string,
    page: PageRequest,
    match: (attempt: DeliveryAttempt) => boolean,
    now: number,
  ): Promise<Page<DeliveryAttempt>> {
    this.sweep(now);
    return collectPage(
      page,
      this.index.records(accountId, (id) => {
        const found = this.attempts.get(id);
        return found ? (JSON.parse(found.json) as DeliveryAttempt) : null;
      }),
      match,
    );
  }

  /** Drops attempts whose retention ended by `now` (retentions are equal, so expiries are in order). */
  private sweep(now: number): void {
    let n = 0;
    for (; n < this.expiries.length && this.expiries[n].at <= now; n++) {
      const { accountId, member, deliveryId } = this.expiries[n];
      this.attempts.delete(deliveryId);
      this.index.remove(accountId, member);
    }
    if (n > 0) this.expiries.splice(0, n);
  }
}
