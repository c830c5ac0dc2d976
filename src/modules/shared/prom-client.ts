import type * as prom from 'prom-client';
import { onFirstUse } from './on-first-use';

/*
 * prom-client as the metrics modules use it, loaded when the first metric or registry is made:
 * the library and what it loads (@opentelemetry/api among them) cost every program start
 * about 40 ms of CPU, and commands that serve no metrics (`--help`, `version`) make none.
 * Import these instead of 'prom-client'; they are its classes and function.
 */

// eslint-disable-next-line @typescript-eslint/no-require-imports
const promClient = onFirstUse(() => require('prom-client') as typeof prom);

type PromClass = 'Counter' | 'Gauge' | 'Histogram' | 'Registry';

/** Stands for one of prom-client's classes: `new` makes the real one, statics and instanceof are the real class's. */
function loadedOnConstruct<K extends PromClass>(name: K): (typeof prom)[K] {
  return new Proxy(function () {} as unknown as (typeof prom)[K], {
    construct: (_target, args) => new (promClient()[name] as new (...a: unknown[]) => object)(...args),
    get: (_target, key) => Reflect.get(promClient()[name], key),
  });
}

export const Counter = loadedOnConstruct('Counter');
export type Counter<T extends string = string> = prom.Counter<T>;
export const Gauge = loadedOnConstruct('Gauge');
export type Gauge<T extends string = string> = prom.Gauge<T>;
export const Histogram = loadedOnConstruct('Histogram');
export type Histogram<T extends string = string> = prom.Histogram<T>;
export const Registry = loadedOnConstruct('Registry');
export type Registry = prom.Registry;

export function collectDefaultMetrics(config?: Parameters<typeof prom.collectDefaultMetrics>[0]): void {
  promClient().collectDefaultMetrics(config);
}
