import { parseArgs } from 'node:util';

const HELP = `genway admin: the admin API from a terminal.
Environment: GENWAY_URL (default http://127.0.0.1:8080), GENWAY_ADMIN_TOKEN (required).

  genway admin accounts create --name NAME [--balance USD]
  genway admin accounts get ACCOUNT_ID
  genway admin credits add ACCOUNT_ID AMOUNT_USD [--reference REF]
  genway admin keys create ACCOUNT_ID [--name NAME] [--models m1,m2] [--rate PER_SEC --burst N]
  genway admin keys revoke KEY_ID
  genway admin keys usage KEY_ID      (LLM gateway tokens by model)

Prints the response's data as JSON; on error prints the message and exits 1.
`;

class UsageError extends Error {}

interface Call {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  body?: unknown;
}

function number(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new UsageError(`${flag} must be a number (got ${value})`);
  return n;
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
    },
  });
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
        },
      };
    }
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
