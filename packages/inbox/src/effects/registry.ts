import { keyOf } from '../event-key.ts';
import type { EffectRouteRow } from '../sql/effect-routes.ts';
import type { EffectSpec } from './types.ts';

/** An effect as the runner sees it, whatever form it was registered in. */
export interface RegisteredEffect {
  name: string;
  kind: 'database' | 'external';
  run: (ctx: never) => Promise<void> | void;
  scope: ((event: never) => string | undefined) | undefined;
}

/**
 * Registered for every event type of a provider, or (as the provider) for every provider. Destinations declare
 * event types with wildcards and a body filter; their effect is registered under `*` and decides for itself.
 */
export const ANY = '*';

// Effect names become ledger keys and metric labels: keep them readable and stable.
const EFFECT_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,99}$/;

/**
 * Which effects run for which (provider, type). Effects of one event run in registration order, each on its own:
 * one failing neither re-runs nor blocks the others.
 */
export class EffectRegistry {
  readonly #effects = new Map<string, RegisteredEffect[]>();

  add(provider: string, types: readonly string[], effects: Record<string, EffectSpec<never>>): void {
    if (types.length === 0) throw new TypeError(`inbox.on('${provider}', ...): no event type given`);
    const normalized = Object.entries(effects).map(([name, spec]) => normalize(name, spec));
    if (normalized.length === 0) throw new TypeError(`inbox.on('${provider}', ...): no effects given`);
    for (const type of types) {
      const key = keyOf(provider, type);
      const list = this.#effects.get(key) ?? [];
      for (const effect of normalized) {
        if (list.some((e) => e.name === effect.name)) {
          throw new TypeError(`effect "${effect.name}" is registered twice for ${provider} ${type}`);
        }
        list.push(effect);
      }
      this.#effects.set(key, list);
    }
  }

  /** The effects of one event type: those registered for it, then those for any type, then for any provider. */
  get(provider: string, type: string): readonly RegisteredEffect[] {
    const exact = this.#effects.get(keyOf(provider, type)) ?? [];
    const wide = [keyOf(provider, ANY), keyOf(ANY, type), keyOf(ANY, ANY)]
      .filter((key) => key !== keyOf(provider, type))
      .flatMap((key) => this.#effects.get(key) ?? []);
    if (wide.length === 0) return exact;
    const seen = new Set<string>();
    return [...exact, ...wide].filter((effect) => !seen.has(effect.name) && seen.add(effect.name));
  }

  /** Every (provider, type, effect), as the worker records them in `effect_routes`. */
  list(): EffectRouteRow[] {
    return [...this.#effects].flatMap(([key, effects]) => {
      const [provider = '', eventType = ''] = key.split('\0');
      return effects.map((effect, position) => ({
        provider,
        eventType,
        effect: effect.name,
        kind: effect.kind,
        position,
      }));
    });
  }

  /** `provider type` pairs with effects, for logs and docs. */
  routes(): string[] {
    return [...this.#effects.keys()].map((key) => key.replace('\0', ' '));
  }
}

function normalize(name: string, spec: EffectSpec<never>): RegisteredEffect {
  if (!EFFECT_NAME.test(name)) {
    throw new TypeError(
      `effect name "${name}" must match ${EFFECT_NAME} (it is a ledger key and a metric label)`,
    );
  }
  if (typeof spec === 'function') return { name, kind: 'database', run: spec, scope: undefined };
  if (spec.kind !== 'database' && spec.kind !== 'external') {
    throw new TypeError(`effect "${name}": use a function, database({ run }) or external({ run })`);
  }
  return { name, kind: spec.kind, run: spec.run, scope: spec.scope };
}
