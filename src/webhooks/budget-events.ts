import { createHash } from 'node:crypto';
import type { AccountsService } from '../accounts/service';
import type { BudgetEvent } from '../accounts/usage';
import { microsToUsd } from '../money';
import type { Logger } from '../observability/logger';
import type { Deliveries } from './types';

/** Stable per (account, budget, period, level): a threshold is announced once, whoever posts the crossing charge. */
export function budgetEventId(event: BudgetEvent): string {
  const key = `budget:${event.accountId}:${event.scope}:${event.stamp}:${event.level}`;
  return `evt_${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
}

/** The body of a `budget.threshold` event: which budget, which level, and the spend that crossed it. */
export function budgetEventBody(event: BudgetEvent, at: number): string {
  return JSON.stringify({
    type: 'budget.threshold',
    createdAt: new Date(at).toISOString(),
    data: {
      accountId: event.accountId,
      scope: event.scope === 'account' ? 'account' : 'key',
      ...(event.scope === 'account' ? {} : { keyId: event.scope.slice(4) }),
      level: event.level,
      period: event.period,
      periodStart: event.period === 'window' ? new Date(event.startsAt!).toISOString() : event.stamp,
      ...(event.period === 'window' ? { periodEnd: new Date(event.endsAt!).toISOString() } : {}),
      limitUsd: microsToUsd(event.limitMicros),
      softPercent: event.softPercent,
      spentUsd: microsToUsd(event.spentMicros),
    },
  });
}

/**
 * Sends each budget event to the account's budget webhook (or the configured default) as a signed webhook, on the
 * same durable delivery queue, secret and signing scheme as the account's other webhooks. No URL: nothing is sent.
 */
export function budgetNotifier(deps: {
  accounts: AccountsService;
  deliveries: Deliveries;
  logger: Logger;
  defaultUrl: string | null;
}) {
  return (event: BudgetEvent): void => {
    void (async () => {
      const url = (await deps.accounts.budgetWebhookUrl(event.accountId)) ?? deps.defaultUrl;
      if (!url) return;
      await deps.deliveries.enqueue({
        kind: 'webhook',
        accountId: event.accountId,
        url,
        body: budgetEventBody(event, Date.now()),
        eventId: budgetEventId(event),
      });
    })().catch((err: unknown) =>
      deps.logger.error(
        { err, accountId: event.accountId, scope: event.scope },
        'enqueueing a budget event failed',
      ),
    );
  };
}
