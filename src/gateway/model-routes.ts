import type { RouteConfig } from '../config/schema';
import type { Upstream } from './upstream';

/** Where a routed call may run: an upstream, and the model's name there. */
export interface Target {
  readonly upstream: Upstream;
  readonly model: string;
}

/** A target of a route as configured: an upstream's model, or another route (its targets in its order). */
type Member = { weight: number } & ({ target: Target } | { route: CompiledRoute });

/**
 * One route, compiled at start: its members, and the state of its weighted rotation. `plan` lists the targets a call
 * tries, in order: a `fallback` route's as configured; a `weighted` route's starting with the member smooth weighted
 * round robin picks (nginx's: exact shares, no randomness), then the others as configured.
 */
class CompiledRoute {
  readonly members: Member[] = [];
  private readonly current: number[] = [];
  private total = 0;

  constructor(
    readonly model: string,
    readonly strategy: 'fallback' | 'weighted',
  ) {}

  add(member: Member): void {
    this.members.push(member);
    this.current.push(0);
    this.total += member.weight;
  }

  plan(out: Target[]): void {
    const { members } = this;
    let first = 0;
    if (this.strategy === 'weighted' && this.total > 0) {
      const { current } = this;
      for (let i = 0; i < members.length; i++) {
        current[i] += members[i].weight;
        if (current[i] > current[first]) first = i;
      }
      current[first] -= this.total;
    }
    take(members[first], out);
    for (let i = 0; i < members.length; i++) if (i !== first) take(members[i], out);
  }
}

function take(member: Member, out: Target[]): void {
  if ('route' in member) return member.route.plan(out);
  const { target } = member;
  // A target reached twice (through two routes) is tried once.
  for (const t of out) if (t.upstream === target.upstream && t.model === target.model) return;
  out.push(target);
}

/**
 * `gateway.routes`: the model names clients send, each mapped to its targets. Built once at start from the validated
 * config (every name it uses exists, and no route reaches itself); a call looks its model up in one map.
 */
export class ModelRoutes {
  private readonly routes = new Map<string, CompiledRoute>();

  constructor(config: readonly RouteConfig[], upstreams: ReadonlyMap<string, Upstream>) {
    for (const r of config) this.routes.set(r.model, new CompiledRoute(r.model, r.strategy));
    for (const r of config) {
      const route = this.routes.get(r.model)!;
      for (const t of r.targets) {
        const weight = t.weight ?? 1;
        if (t.route !== undefined) route.add({ weight, route: this.routes.get(t.route)! });
        else
          route.add({ weight, target: { upstream: upstreams.get(t.upstream!)!, model: t.model ?? r.model } });
      }
    }
  }

  get size(): number {
    return this.routes.size;
  }

  /** The targets a call naming `model` tries, in order; undefined when no route names it. */
  plan(model: string): Target[] | undefined {
    const route = this.routes.get(model);
    if (!route) return undefined;
    const out: Target[] = [];
    route.plan(out);
    return out;
  }

  has(model: string): boolean {
    return this.routes.has(model);
  }

  /** Every route's name. */
  names(): IterableIterator<string> {
    return this.routes.keys();
  }
}
