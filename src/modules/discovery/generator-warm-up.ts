import { inject, injectable } from 'inversify';
import { TypeUrl } from '../envoy/type-urls';
import { XdsGenerators } from '../generators';
import { Logging, LoggingToken } from '../logging';
import { XdsResource } from '../model/generator';
import { parseProxy } from '../model/proxy';
import { PushContext } from '../model/push-context';

/** The namespace of the sidecar the warm-up generates for: one no workload is expected in. */
export const WARM_UP_NAMESPACE = 'mesh-generator-warm-up';

/**
 * Generates the CDS of a sidecar with the default scope before the daemon takes streams. Each
 * service's outbound clusters are encoded once and cached across pushes for every proxy that
 * sees the same DestinationRule; done for the first proxy of a connect storm instead, it was
 * one synchronous piece of about 1.4 s for 1,000 services on a slow machine, with /ready and
 * every other stream waiting. Start-up (not yet ready) pays it instead.
 */
@injectable()
export class GeneratorWarmUp {
  constructor(
    @inject(XdsGenerators) private readonly generators: XdsGenerators,
    @inject(LoggingToken) private readonly logging: Logging,
  ) {}

  /** Never fails the start: a generator that throws here would throw for a real proxy too, and is reported then. */
  warm(push: PushContext): XdsResource[] {
    const log = this.logging.scope('ads');
    const sidecar = this.generators.byName.get('');
    if (!sidecar) return [];
    const proxy = parseProxy(`sidecar~0.0.0.0~warm-up.${WARM_UP_NAMESPACE}~${WARM_UP_NAMESPACE}.svc.cluster.local`, { NAMESPACE: WARM_UP_NAMESPACE });
    const started = performance.now();
    try {
      const clusters = sidecar.generate({ proxy, push, typeUrl: TypeUrl.Cluster, names: undefined });
      log.debug(`generated ${clusters.length} clusters before taking streams in ${(performance.now() - started).toFixed(0)} ms`);
      return clusters;
    } catch (err) {
      log.debug(`generator warm-up failed: ${(err as Error).message}`);
      return [];
    }
  }
}
