import { ContainerModule, inject, injectable } from 'inversify';
import { BuildInfo, BuildInfoToken } from '../build-info';
import { DaemonMetrics, DaemonMetricsOptions, DaemonMetricsOptionsToken } from './metrics';

/** The daemon's metrics are labelled with its component name and this build's version. */
@injectable()
class DaemonMetricsFromBuild implements DaemonMetricsOptions {
  readonly component = 'pilot';
  readonly version: string;

  constructor(@inject(BuildInfoToken) build: BuildInfo) {
    this.version = build.version;
  }
}

export function monitoringModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(DaemonMetricsOptionsToken).to(DaemonMetricsFromBuild).inSingletonScope();
    bind(DaemonMetrics).toSelf().inSingletonScope();
  });
}
