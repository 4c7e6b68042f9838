import type { ServerResponse } from 'node:http';
import type { Config } from '../config';
import type { ApiError } from '../errors';
import { KeyPool, type PoolHooks, type VendorKey } from './key-pool';
import { UPSTREAM_TYPES, type UpstreamConfig } from './upstreams';
import type { UpstreamCalls, UpstreamType } from './upstreams/types';
import type { VendorDefinition, VendorName } from './vendor';
import { VENDOR_BY_NAME, VENDORS } from './vendors';
import { bedrock } from './vendors/bedrock';
import { vertex } from './vendors/vertex';

/**
 * An upstream bound to this deployment's config: where it is, its key pool, and how routed calls reach it. The three
 * vendors' own (`gateway.anthropic`, `.openai`, `.gemini`) also pass their whole APIs through; the others of
 * `gateway.upstreams` are reached by routes.
 */
export interface Upstream {
  /** Its id: a vendor's name for the three built in, else its `gateway.upstreams` id. */
  readonly name: string;
  /** Its type (src/gateway/upstreams/). */
  readonly type: string;
  /** The API it speaks, as Genway's own formats know it: its key header, defaults and error shape for passthrough. */
  readonly def: VendorDefinition;
  readonly origin: URL;
  /** The origin's path (a vendor behind a path prefix), without a trailing slash. */
  readonly basePath: string;
  /** `origin + basePath`: what absolute URLs the vendor hands out start with. */
  readonly base: string;
  /** Headers filled in when the client sends none, as [lower-case name, value]. */
  readonly defaults: readonly (readonly [string, string])[];
  readonly keyCount: number;
  /** The vendor's keys (and fallback origins): rotation, cooldowns, failover (src/gateway/key-pool.ts). */
  readonly pool: KeyPool;
  /** How a routed call is sent here: its path, body, headers and auth. */
  readonly calls: UpstreamCalls;
  /** Next vendor key of the pool (weighted round robin over healthy keys); undefined when none is configured. */
  nextKey(): VendorKey | undefined;
  /** A key's fingerprint: how a remembered object names the key it was created with (never the key itself). */
  fingerprint(key: VendorKey): string;
  /** The pool's key with this fingerprint, if it is still in the pool. */
  keyOf(fingerprint: string): VendorKey | undefined;
  /** Writes one of Genway's own refusals in this vendor's error shape (plain node:http). */
  renderError(res: ServerResponse, err: ApiError, headers: Record<string, string>): void;
}

/** Genway's own refusal in a format's error shape (plain node:http). */
export function renderError(
  def: VendorDefinition,
  res: ServerResponse,
  err: ApiError,
  headers: Record<string, string>,
): void {
  const payload = JSON.stringify(def.errorBody(err.status, err.message));
  res.writeHead(err.status, {
    ...headers,
    ...def.errorHeaders?.(err.status),
    ...err.headers,
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(payload),
  });
  res.end(payload);
}

/** The format a configured upstream's type speaks in Genway's terms (its error shape, its passthrough headers). */
const DEF_OF_TYPE: Record<string, VendorDefinition> = {
  anthropic: VENDOR_BY_NAME.anthropic,
  openai: VENDOR_BY_NAME.openai,
  'azure-openai': VENDOR_BY_NAME.openai,
  gemini: VENDOR_BY_NAME.gemini,
  bedrock,
  vertex,
};

function bind(
  name: string,
  def: VendorDefinition,
  type: UpstreamType<UpstreamConfig>,
  config: UpstreamConfig,
  failover: Config['gateway']['failover'],
  hooks: PoolHooks | undefined,
  path: string,
  defaults: Record<string, string>,
): Upstream {
  const poolConfig = type.pool(config);
  const origin = new URL(poolConfig.baseUrl);
  const basePath = origin.pathname.replace(/\/+$/, '');
  const pool = new KeyPool(name, poolConfig, failover, hooks);
  return {
    name,
    type: type.type,
    def,
    origin,
    basePath,
    base: origin.origin + basePath,
    defaults: Object.entries(defaults).map(([n, v]) => [n.toLowerCase(), v] as const),
    keyCount: pool.members.length,
    pool,
    calls: type.bind(config, { path }),
    nextKey: () => pool.first(),
    fingerprint: (key) => key.fingerprint,
    keyOf: (fp) => pool.keyOf(fp),
    renderError: (res, err, headers) => renderError(def, res, err, headers),
  };
}

/** Every upstream of a deployment: the three vendors' own, then `gateway.upstreams`. */
export interface Upstreams {
  /** Where each vendor's unrouted calls (and its mount) go. */
  readonly vendors: Readonly<Record<VendorName, Upstream>>;
  /** Each upstream by its id (the vendors' own under their names). */
  readonly byId: ReadonlyMap<string, Upstream>;
  /** The first configured upstream of a type: where a cloud format's calls go when no route names their model. */
  firstOf(type: string): Upstream | undefined;
  /** Stops background work (token refreshes). */
  close(): void;
}

const TYPES = new Map<string, UpstreamType<UpstreamConfig>>(
  UPSTREAM_TYPES.map((t) => [t.type, t as unknown as UpstreamType<UpstreamConfig>]),
);

export function bindUpstreams(gateway: Config['gateway'], hooks?: PoolHooks): Upstreams {
  const vendors = Object.fromEntries(
    VENDORS.map((def) => {
      const name = def.name as VendorName;
      const config = gateway[name];
      const upstreamConfig = { id: name, type: name, ...config } as UpstreamConfig;
      return [
        name,
        bind(name, def, TYPES.get(name)!, upstreamConfig, gateway.failover, hooks, `gateway.${name}`, {
          ...def.defaultHeaders?.(config),
        }),
      ];
    }),
  ) as Record<VendorName, Upstream>;
  const byId = new Map<string, Upstream>(Object.entries(vendors));
  gateway.upstreams.forEach((config, i) => {
    const type = TYPES.get(config.type)!;
    byId.set(
      config.id,
      bind(
        config.id,
        DEF_OF_TYPE[config.type],
        type,
        config,
        gateway.failover,
        hooks,
        `gateway.upstreams.${i}`,
        {},
      ),
    );
  });
  const firstOfType = new Map<string, Upstream>();
  for (const config of gateway.upstreams) {
    if (!firstOfType.has(config.type)) firstOfType.set(config.type, byId.get(config.id)!);
  }
  return {
    vendors,
    byId,
    firstOf: (type) => firstOfType.get(type),
    close: () => {
      for (const u of byId.values()) u.calls.close?.();
    },
  };
}
