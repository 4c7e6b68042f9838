import { parseArgs } from 'node:util';

const HELP = `genway admin: the admin API from a terminal.
Environment: GENWAY_URL (default http://127.0.0.1:8080), GENWAY_ADMIN_TOKEN (required).

  genway admin accounts create --name NAME [--balance USD]
  genway admin accounts list
  genway admin accounts get ACCOUNT_ID
  genway admin credits add ACCOUNT_ID AMOUNT_USD [--reference REF]
  genway admin keys create ACCOUNT_ID [--name NAME] [--models m1,m2] [--rate PER_SEC --burst N]
                                      [--expires ISO_TIME] [--metadata JSON]
  genway admin keys list ACCOUNT_ID
  genway admin keys get KEY_ID
  genway admin keys rotate KEY_ID --grace SECONDS [--expires ISO_TIME]
  genway admin keys revoke KEY_ID
  genway admin keys usage KEY_ID      (LLM gateway tokens by model)
  genway admin budgets set account|key ID --period day|month --limit USD [--soft PERCENT] [--webhook URL]
  genway admin budgets set account|key ID --period window --starts ISO_TIME --ends ISO_TIME --limit USD ...
  genway admin budgets get account|key ID
  genway admin budgets delete account|key ID
  genway admin usage [--account ACCOUNT_ID] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--group-by day|model|key]
                     [--format json|csv]
  genway admin logs [--account ACCOUNT_ID] [--key KEY_ID] [--model M] [--status 200|5xx] [--upstream U]
                    [--from ISO] [--to ISO] [--limit N] [--cursor C] [--format json|csv|jsonl]
  genway admin logs bodies set account|key ID --mode off|metadata|full|default
  genway admin audit [--account ACCOUNT_ID] [--actor admin|KEY_ID] [--action key.revoke] [--target key:KEY_ID]
                     [--from ISO] [--to ISO] [--limit N] [--cursor C] [--format json|csv|jsonl]

Prints the response's data as JSON (CSV and JSON lines as they come); on error prints the message and exits 1.
`;

class UsageError extends Error {}

interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  body?: unknown;
}

function number(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new UsageError(`${flag} must be a number (got ${value})`);
  return n;
}

function jsonFlag(value: string, flag: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw new UsageError(`${flag} must be JSON (got ${value})`);
  }
}

function budgetPath(scope: string | undefined, id: string | undefined): string {
  if (scope !== 'account' && scope !== 'key')
    throw new UsageError('budgets: say account or key, then its id');
  if (!id) throw new UsageError(`missing ${scope === 'account' ? 'ACCOUNT_ID' : 'KEY_ID'}`);
  return `/${scope === 'account' ? 'accounts' : 'keys'}/${encodeURIComponent(id)}/budget`;
}

function toCall(args: string[]): Call {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      balance: { type: 'string' },
      reference: { type: 'string' },
      models: { type: 'string' },
      rate: { type: 'string' },
      burst: { type: 'string' },
      expires: { type: 'string' },
      metadata: { type: 'string' },
      grace: { type: 'string' },
      period: { type: 'string' },
      limit: { type: 'string' },
      soft: { type: 'string' },
      webhook: { type: 'string' },
      starts: { type: 'string' },
      ends: { type: 'string' },
      account: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      'group-by': { type: 'string' },
      format: { type: 'string' },
      key: { type: 'string' },
      model: { type: 'string' },
      status: { type: 'string' },
      upstream: { type: 'string' },
      cursor: { type: 'string' },
      actor: { type: 'string' },
      action: { type: 'string' },
      target: { type: 'string' },
      mode: { type: 'string' },
    },
  });
  /** GET `path` with the given flags as its query, in that order. */
  const listing = (path: string, flags: [string, string | undefined][]): Call => {
    const query = new URLSearchParams();
    for (const [name, value] of flags) if (value !== undefined) query.set(name, value);
    const text = query.toString();
    return { method: 'GET', path: `${path}${text ? `?${text}` : ''}` };
  };
  const [group, action, id, amount] = positionals;
  const need = (value: string | undefined, what: string) => {
    if (!value) throw new UsageError(`missing ${what}`);
    return encodeURIComponent(value);
  };
  switch (`${group} ${action}`) {
    case 'accounts create':
      return {
        method: 'POST',
        path: '/accounts',
        body: {
          name: values.name ?? need(undefined, '--name'),
          balanceUsd: number(values.balance, '--balance'),
        },
      };
    case 'accounts list':
      return { method: 'GET', path: '/accounts' };
    case 'accounts get':
      return { method: 'GET', path: `/accounts/${need(id, 'ACCOUNT_ID')}` };
    case 'credits add':
      return {
        method: 'POST',
        path: `/accounts/${need(id, 'ACCOUNT_ID')}/credits`,
        body: {
          amountUsd: number(amount ?? need(undefined, 'AMOUNT_USD'), 'AMOUNT_USD'),
          reference: values.reference,
        },
      };
    case 'keys create': {
      const rate = number(values.rate, '--rate');
      const burst = number(values.burst, '--burst');
      if ((rate === undefined) !== (burst === undefined))
        throw new UsageError('--rate and --burst go together');
      return {
        method: 'POST',
        path: `/accounts/${need(id, 'ACCOUNT_ID')}/keys`,
        body: {
          name: values.name,
          models: values.models?.split(',').map((m) => m.trim()),
          rateLimit: rate === undefined ? undefined : { ratePerSec: rate, burst },
          expiresAt: values.expires,
          metadata: values.metadata === undefined ? undefined : jsonFlag(values.metadata, '--metadata'),
        },
      };
    }
    case 'keys list':
      return { method: 'GET', path: `/accounts/${need(id, 'ACCOUNT_ID')}/keys` };
    case 'keys get':
      return { method: 'GET', path: `/keys/${need(id, 'KEY_ID')}` };
    case 'keys rotate':
      return {
        method: 'POST',
        path: `/keys/${need(id, 'KEY_ID')}/rotate`,
        body: {
          graceSeconds: number(values.grace ?? need(undefined, '--grace'), '--grace'),
          expiresAt: values.expires,
        },
      };
    case 'budgets set':
    case 'budgets get':
    case 'budgets delete': {
      // `budgets set account ACCOUNT_ID`: the scope comes where other commands have their id.
      const target = budgetPath(id, amount);
      if (action === 'get') return { method: 'GET', path: target };
      if (action === 'delete') return { method: 'DELETE', path: target };
      return {
        method: 'PUT',
        path: target,
        body: {
          period: values.period ?? need(undefined, '--period'),
          limitUsd: number(values.limit ?? need(undefined, '--limit'), '--limit'),
          softPercent: number(values.soft, '--soft'),
          webhookUrl: values.webhook,
          startsAt: values.starts,
          endsAt: values.ends,
        },
      };
    }
    case 'usage undefined': {
      const query = new URLSearchParams();
      for (const [name, value] of [
        ['accountId', values.account],
        ['from', values.from],
        ['to', values.to],
        ['groupBy', values['group-by']],
        ['format', values.format],
      ] as const)
        if (value !== undefined) query.set(name, value);
      const text = query.toString();
      return { method: 'GET', path: `/usage${text ? `?${text}` : ''}` };
    }
    case 'logs undefined':
      return listing('/logs', [
        ['accountId', values.account],
        ['keyId', values.key],
        ['model', values.model],
        ['status', values.status],
        ['upstream', values.upstream],
        ['from', values.from],
        ['to', values.to],
        ['limit', values.limit],
        ['cursor', values.cursor],
        ['format', values.format],
      ]);
    case 'logs bodies': {
      // `logs bodies set account ACCOUNT_ID --mode full`
      const [, , verb, scope, target] = positionals;
      if (verb !== 'set') throw new UsageError('logs bodies: say set');
      if (scope !== 'account' && scope !== 'key') throw new UsageError('logs bodies set: say account or key');
      const mode = values.mode ?? need(undefined, '--mode');
      return {
        method: 'PUT',
        path: `/${scope === 'account' ? 'accounts' : 'keys'}/${need(target, 'ID')}/log-bodies`,
        body: { mode: mode === 'default' ? null : mode },
      };
    }
    case 'audit undefined':
      return listing('/audit', [
        ['accountId', values.account],
        ['actor', values.actor],
        ['action', values.action],
        ['target', values.target],
        ['from', values.from],
        ['to', values.to],
        ['limit', values.limit],
        ['cursor', values.cursor],
        ['format', values.format],
      ]);
    case 'keys revoke':
      return { method: 'DELETE', path: `/keys/${need(id, 'KEY_ID')}` };
    case 'keys usage':
      return { method: 'GET', path: `/keys/${need(id, 'KEY_ID')}/usage` };
    default:
      throw new UsageError(`unknown admin command: ${positionals.join(' ') || '(none)'}`);
  }
}

export async function runAdminCli(args: string[], env = process.env): Promise<number> {
  if (args.length === 0 || args[0] === 'help' || args.includes('--help')) {
    process.stdout.write(HELP);
    return 0;
  }
  let call: Call;
  try {
    call = toCall(args);
  } catch (err) {
    process.stderr.write(`genway admin: ${(err as Error).message}\n\n${HELP}`);
    return 2;
  }
  const token = env.GENWAY_ADMIN_TOKEN;
  if (!token) {
    process.stderr.write("genway admin: set GENWAY_ADMIN_TOKEN to the server's admin.token\n");
    return 2;
  }
  const base = (env.GENWAY_URL ?? `http://127.0.0.1:${env.PORT ?? 8080}`).replace(/\/+$/, '');
  let response: Response;
  try {
    response = await fetch(`${base}/admin/v1${call.path}`, {
      method: call.method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(call.body ? { 'content-type': 'application/json' } : {}),
      },
      body: call.body ? JSON.stringify(call.body) : undefined,
    });
  } catch (err) {
    process.stderr.write(
      `genway admin: cannot reach ${base}: ${(err as Error).cause ?? (err as Error).message}\n`,
    );
    return 1;
  }
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  if (response.ok && (type.startsWith('text/csv') || type.startsWith('application/x-ndjson'))) {
    process.stdout.write(text);
    return 0;
  }
  let envelope: { code?: number; message?: string; data?: unknown };
  try {
    envelope = JSON.parse(text);
  } catch {
    process.stderr.write(`genway admin: ${response.status} from ${base} (not a Genway admin API?)\n`);
    return 1;
  }
  if (!response.ok) {
    process.stderr.write(`genway admin: ${response.status} ${envelope.message ?? ''}\n`);
    return 1;
  }
  process.stdout.write(`${JSON.stringify(envelope.data, null, 2)}\n`);
  return 0;
}
