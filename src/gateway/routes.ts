import type { IncomingHttpHeaders } from 'node:http';
import type { RouteSpec, VendorDefinition } from './vendor';

/** One vendor route, compiled: matched by exact path (no parameters) or by its pattern. */
export interface Route {
  readonly vendor: VendorDefinition;
  readonly spec: RouteSpec;
  /** The template as declared: the metrics and access-log label. */
  readonly template: string;
  readonly pattern: RegExp | null;
  readonly params: readonly string[];
}

interface Match {
  route: Route;
  params: Record<string, string>;
}

/** Where a request goes: a vendor, and its route unless the path is unknown (a vendor mount passes it anyway). */
export type Resolution =
  | { kind: 'route'; vendor: VendorDefinition; route: Route; params: Record<string, string> }
  /** The path is the vendor's, not the method: 405 with `allow`. */
  | { kind: 'method'; vendor: VendorDefinition; allow: string[] }
  /** No route of any vendor (or of the mount's vendor) has this path. */
  | { kind: 'unknown'; vendor: VendorDefinition };

/** `(a|b)` segments expanded: one concrete template per alternative. */
function expand(template: string): string[] {
  const m = /\(([^()]+)\)/.exec(template);
  if (!m) return [template];
  return m[1]
    .split('|')
    .flatMap((alt) => expand(template.slice(0, m.index) + alt + template.slice(m.index + m[0].length)));
}

const PARAM = /\{([A-Za-z_]+)(\*{0,2})\}/g;

function compile(template: string): { pattern: RegExp | null; params: string[] } {
  if (!template.includes('{')) return { pattern: null, params: [] };
  const params: string[] = [];
  let source = '^';
  let last = 0;
  for (const m of template.matchAll(PARAM)) {
    source += escape(template.slice(last, m.index));
    params.push(m[1]);
    source += m[2] === '**' ? '(.+)' : m[2] === '*' ? '([^/]+)' : '([^/:]+)';
    last = m.index + m[0].length;
  }
  source += `${escape(template.slice(last))}$`;
  return { pattern: new RegExp(source), params };
}

const escape = (literal: string) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The first two segments of a path (`/v1beta/models/...` -> `v1beta/models`): the bucket patterns live in. */
function bucketOf(path: string): string {
  const second = path.indexOf('/', 1);
  if (second === -1) return path.slice(1);
  const third = path.indexOf('/', second + 1);
  const end = third === -1 ? path.length : third;
  // A parameter or an action (`files:register`) in the second segment: bucket by the first segment only.
  const segment = path.slice(second + 1, end);
  return /[{:(]/.test(segment) ? path.slice(1, second) : path.slice(1, end);
}

/**
 * The gateway's route table, built once from the vendor definitions: exact paths in a map, parameterised ones
 * bucketed by their first two segments. A path several vendors serve (`GET /v1/models`) goes to the vendor its
 * headers name (`VendorDefinition.claims`, in `vendors` order).
 */
export class RouteTable {
  private readonly exact = new Map<string, Route[]>();
  private readonly patterns = new Map<string, Route[]>();
  private readonly all: Route[] = [];
  /** Every route an exact path matches, patterns included, found once at start: no regex on those paths. */
  private readonly known = new Map<string, Match[]>();

  /** The vendors a path outside every mount may reach (a cloud's format is served under its mount only). */
  private readonly vendors: readonly VendorDefinition[];

  constructor(all: readonly VendorDefinition[]) {
    this.vendors = all.filter((v) => !v.mountOnly);
    for (const vendor of all) {
      for (const spec of vendor.routes) {
        for (const concrete of expand(spec.path)) {
          const { pattern, params } = compile(concrete);
          const route: Route = { vendor, spec, template: spec.path, pattern, params };
          this.all.push(route);
          const map = pattern ? this.patterns : this.exact;
          const key = pattern ? bucketOf(concrete) : concrete;
          const list = map.get(key);
          if (list) list.push(route);
          else map.set(key, [route]);
        }
      }
    }
    for (const path of this.exact.keys()) this.known.set(path, this.scan(path));
  }

  /** Every route whose path matches, with its parameters. */
  private matches(path: string): Match[] {
    return this.known.get(path) ?? this.scan(path);
  }

  private scan(path: string): Match[] {
    const out: Match[] = [];
    for (const route of this.exact.get(path) ?? []) out.push({ route, params: {} });
    const buckets = [bucketOf(path)];
    const first = path.indexOf('/', 1);
    if (first !== -1) buckets.push(path.slice(1, first));
    for (const bucket of buckets) {
      for (const route of this.patterns.get(bucket) ?? []) {
        const m = route.pattern!.exec(path);
        if (!m) continue;
        const params: Record<string, string> = {};
        route.params.forEach((name, i) => (params[name] = m[i + 1]));
        out.push({ route, params });
      }
    }
    return out;
  }

  /**
   * Resolves a request. `only` restricts it to one vendor (a vendor mount). `hasQueryKey` says the key came as
   * `?key=` (Google's style).
   */
  resolve(
    method: string,
    path: string,
    headers: IncomingHttpHeaders,
    hasQueryKey: boolean,
    only?: VendorDefinition,
  ): Resolution {
    let found = this.matches(path);
    if (only) found = found.filter((f) => f.route.vendor === only);
    else if (found.some((f) => f.route.vendor.mountOnly))
      found = found.filter((f) => !f.route.vendor.mountOnly);
    if (found.length === 0) {
      return { kind: 'unknown', vendor: only ?? this.guess(path, headers, hasQueryKey) };
    }
    // Headers that name a vendor decide: a request its SDK marked as one vendor's never goes to another vendor's
    // route, even where that one has the same path (it is the named vendor's 404 or 405 instead).
    const named = only ?? this.namedBy(headers, hasQueryKey);
    if (named) found = found.filter((f) => f.route.vendor === named);
    if (found.length === 0) return { kind: 'unknown', vendor: named! };
    let vendor = found[0].route.vendor;
    if (found.some((f) => f.route.vendor !== vendor)) {
      const serving = this.vendors.filter((v) => found.some((f) => f.route.vendor === v));
      vendor = serving.find((v) => v.claims(headers, hasQueryKey)) ?? serving[0];
    }
    const mine = found.filter((f) => f.route.vendor === vendor);
    const hit = mine.find((f) => f.route.spec.method === method);
    if (hit) return { kind: 'route', vendor, route: hit.route, params: hit.params };
    return { kind: 'method', vendor, allow: [...new Set(mine.map((f) => f.route.spec.method))] };
  }

  /**
   * The vendor the request's own headers name, if any but the default (the last vendor, which claims whatever
   * carries just a Bearer key).
   */
  private namedBy(headers: IncomingHttpHeaders, hasQueryKey: boolean): VendorDefinition | undefined {
    for (let i = 0; i < this.vendors.length - 1; i++) {
      if (this.vendors[i].claims(headers, hasQueryKey)) return this.vendors[i];
    }
    return undefined;
  }

  /** The vendor whose error shape an unknown path is answered in. */
  private guess(path: string, headers: IncomingHttpHeaders, hasQueryKey: boolean): VendorDefinition {
    const gemini = this.vendors.find((v) => v.name === 'gemini');
    if (gemini && /^\/(v1beta|v1alpha|upload)(\/|$)/.test(path)) return gemini;
    return this.vendors.find((v) => v.claims(headers, hasQueryKey)) ?? this.vendors[0];
  }

  /** Every compiled route (for the conformance suite and docs). */
  routes(): readonly Route[] {
    return this.all;
  }
}
