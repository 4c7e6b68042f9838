import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { z } from 'zod';
import { VENDORS } from '../gateway/vendors';
import { PACKAGE_ROOT } from '../paths';
import { ConfigError } from './config-error';
import { checkedConfigSchema, type Config } from './schema';

export { ConfigError };

type Plain = Record<string, unknown>;
type Env = Record<string, string | undefined>;

const DEFAULT_FILE = path.join(PACKAGE_ROOT, 'config', 'default.yaml');

function isPlain(value: unknown): value is Plain {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Objects merge key by key; arrays and scalars in `over` replace those in `base`. */
export function deepMerge(base: Plain, over: Plain): Plain {
  const out: Plain = { ...base };
  for (const [key, value] of Object.entries(over)) {
    out[key] = isPlain(value) && isPlain(out[key]) ? deepMerge(out[key] as Plain, value) : value;
  }
  return out;
}

function readYaml(file: string): Plain {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(
      `config: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
  let doc: unknown;
  try {
    doc = YAML.parse(text) ?? {};
  } catch (err) {
    throw new ConfigError(`config: ${file} is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!isPlain(doc)) throw new ConfigError(`config: ${file} must hold a mapping at the top level`);
  return doc;
}

function numberOrText(value: string): number | string {
  return /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : value;
}

function list(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `name=value,...` with percent-encoded values: OpenTelemetry's OTEL_EXPORTER_OTLP_*HEADERS format. */
function headerList(value: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of list(value)) {
    const eq = pair.indexOf('=');
    const raw = eq === -1 ? '' : pair.slice(eq + 1).trim();
    let decoded = raw;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      // kept as written
    }
    headers[(eq === -1 ? pair : pair.slice(0, eq)).trim()] = decoded;
  }
  return headers;
}

/** Environment variables that win over the files; unset or empty variables change nothing. */
function fromEnv(env: Env): Plain {
  const set = (target: Plain, keyPath: readonly string[], value: unknown) => {
    let node = target;
    for (const key of keyPath.slice(0, -1)) node = (node[key] ??= {}) as Plain;
    node[keyPath[keyPath.length - 1]] = value;
  };
  const out: Plain = {};
  const table: (readonly [string, readonly string[], (v: string) => unknown])[] = [
    ['PORT', ['server', 'port'], numberOrText],
    ['HOST', ['server', 'host'], String],
    ['GENWAY_PUBLIC_URL', ['server', 'publicUrl'], String],
    ['REDIS_URL', ['store', 'redisUrl'], String],
    ['REDIS_SENTINELS', ['store', 'sentinels'], list],
    ['REDIS_SENTINEL_NAME', ['store', 'sentinelName'], String],
    ['REDIS_CLUSTER_NODES', ['store', 'clusterNodes'], list],
    ['GENWAY_STORE_PREFIX', ['store', 'prefix'], String],
    ['GENWAY_ADMIN_TOKEN', ['admin', 'token'], String],
    // The common name, and Genway's own for a process whose DATABASE_URL means something else (it wins).
    ['DATABASE_URL', ['logs', 'databaseUrl'], String],
    ['GENWAY_DATABASE_URL', ['logs', 'databaseUrl'], String],
    ['GENWAY_SECRETS_KEY', ['security', 'secretsKey'], String],
    ['LOG_LEVEL', ['log', 'level'], String],
    ['GENWAY_CONSOLE_DIR', ['console', 'dir'], String],
    ['GENWAY_CONSOLE_ENABLED', ['console', 'enabled'], (v) => !/^(0|false|no|off)$/i.test(v)],
    ['GENWAY_LOGS_ENABLED', ['logs', 'enabled'], (v) => !/^(0|false|no|off)$/i.test(v)],
    // OpenTelemetry's own names: the base endpoint gets the traces path, the per-signal one is used as is (and wins).
    [
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      ['tracing', 'otlpEndpoint'],
      (base) => `${base.replace(/\/+$/, '')}/v1/traces`,
    ],
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', ['tracing', 'otlpEndpoint'], String],
    ['OTEL_SERVICE_NAME', ['tracing', 'serviceName'], String],
    ['OTEL_EXPORTER_OTLP_HEADERS', ['tracing', 'headers'], headerList],
    ['OTEL_EXPORTER_OTLP_TRACES_HEADERS', ['tracing', 'headers'], headerList],
    ...VENDORS.flatMap(({ name, env }) =>
      env
        ? [
            [env.baseUrl, ['gateway', name, 'baseUrl'], String] as const,
            [env.apiKeys, ['gateway', name, 'apiKeys'], list] as const,
          ]
        : [],
    ),
  ];
  for (const [name, keyPath, convert] of table) {
    const value = env[name];
    if (value !== undefined && value !== '') set(out, keyPath, convert(value));
  }
  return out;
}

/**
 * Config keys whose values may be credentials: tokens, secrets, keys, passwords, header lists, Redis and database URLs,
 * service accounts; and whole entries of `gateway.upstreams` (an upstream's object holds its credentials).
 */
const SECRET_KEY = /token|secret|key|password|headers|redis|database|credential/i;
const secretHolder = (key: string, got: unknown) =>
  typeof got === 'object' && got !== null && key.startsWith('gateway.upstreams');

function describe(issue: z.core.$ZodIssue, input: Plain): string {
  const key = issue.path.join('.') || '(root)';
  let got: unknown = input;
  for (const part of issue.path)
    got = isPlain(got) || Array.isArray(got) ? (got as Plain)[part as string] : undefined;
  // A secret is never echoed (a too-short admin token, a Redis URL with its password): only what kind it was.
  const shown =
    got === undefined
      ? ''
      : SECRET_KEY.test(key) || secretHolder(key, got)
        ? ` (got ${typeof got === 'string' ? `${got.length} characters` : typeof got}, not shown)`
        : ` (got ${JSON.stringify(got)})`;
  if (issue.code === 'unrecognized_keys') return `config: ${key}: unknown key(s) ${issue.keys.join(', ')}`;
  return `config: ${key}: ${issue.message}${shown}`;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

export interface LoadOptions {
  env?: Env;
  /** Merged over the files and under the environment; tests use it instead of writing YAML. */
  overlay?: Plain;
  defaultsFile?: string;
}

/** default.yaml <- GENWAY_CONFIG <- overlay <- env, validated and frozen. Throws ConfigError with one line. */
export function loadConfig({
  env = process.env,
  overlay,
  defaultsFile = DEFAULT_FILE,
}: LoadOptions = {}): Config {
  let merged = readYaml(defaultsFile);
  if (env.GENWAY_CONFIG) merged = deepMerge(merged, readYaml(env.GENWAY_CONFIG));
  if (overlay) merged = deepMerge(merged, overlay);
  merged = deepMerge(merged, fromEnv(env));
  const parsed = checkedConfigSchema.safeParse(merged);
  if (!parsed.success) throw new ConfigError(describe(parsed.error.issues[0], merged));
  return deepFreeze(parsed.data);
}
