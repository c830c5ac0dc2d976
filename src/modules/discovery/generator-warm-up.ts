import { inject, injectable } from 'inversify';
import { SHORT_TYPE, TypeUrl, XdsTypeUrl } from '../envoy/type-urls';
import { XdsGenerators } from '../generators';
import { Logging, LoggingToken } from '../logging';
import { XdsResource } from '../model/generator';
import { parseProxy } from '../model/proxy';
import { PushContext } from '../model/push-context';

/** The namespace of the sidecar the warm-up generates for: one no workload is expected in. */
export const WARM_UP_NAMESPACE = 'mesh-generator-warm-up';

/** What the warm-up generated, by type (empty where a generator failed). */
export interface WarmedUp {
  clusters: XdsResource[];
  loadAssignments: XdsResource[];
  routes: XdsResource[];
}

/**
 * Generates CDS, EDS and RDS of a sidecar with the default scope, in a namespace of its own,
 * before the daemon takes streams. Each service's outbound clusters and load assignments are
 * encoded once and cached across pushes for every proxy that sees the same DestinationRule,
 * and so is its default virtual host for every namespace but its own. Done for the first
 * proxies of a connect storm instead, each type was one synchronous piece of 0.5–1.4 s for
 * 1,000 services on a slow machine, with /ready and every other stream waiting. Start-up (not
 * yet ready) pays it instead.
 */
@injectable()
export class GeneratorWarmUp {
  constructor(
    @inject(XdsGenerators) private readonly generators: XdsGenerators,
    @inject(LoggingToken) private readonly logging: Logging,
  ) {}

  /** Never fails the start: a generator that throws here would throw for a real proxy too, and is reported then. */
  warm(push: PushContext): WarmedUp {
    const warmed: WarmedUp = { clusters: [], loadAssignments: [], routes: [] };
    const sidecar = this.generators.byName.get('');
    if (!sidecar) return warmed;
    const log = this.logging.scope('ads');
    const proxy = parseProxy(`sidecar~0.0.0.0~warm-up.${WARM_UP_NAMESPACE}~${WARM_UP_NAMESPACE}.svc.cluster.local`, { NAMESPACE: WARM_UP_NAMESPACE });
    const generate = (typeUrl: XdsTypeUrl): XdsResource[] => {
      const started = performance.now();
      try {
        const resources = sidecar.generate({ proxy, push, typeUrl, names: undefined });
        log.debug(`generated ${resources.length} ${SHORT_TYPE[typeUrl].toUpperCase()} resources before taking streams in ${(performance.now() - started).toFixed(0)} ms`);
        return resources;
      } catch (err) {
        log.debug(`generator warm-up of ${SHORT_TYPE[typeUrl].toUpperCase()} failed: ${(err as Error).message}`);
        return [];
      }
    };
    warmed.clusters = generate(TypeUrl.Cluster);
    warmed.loadAssignments = generate(TypeUrl.ClusterLoadAssignment);
    warmed.routes = generate(TypeUrl.RouteConfiguration);
    return warmed;
  }
}
