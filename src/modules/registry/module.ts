import { ContainerModule } from 'inversify';
import { MulticlusterMetrics, MulticlusterRegistry, OrchRegistryMetrics, OrchServiceRegistry, RemoteClusterController } from './orch';
import { ServiceRegistries } from './registries';

export function registryModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(ServiceRegistries).toSelf().inSingletonScope();
    // Made only by a program that binds OrchRegistryOptionsToken and the orchestrator client's options.
    bind(OrchRegistryMetrics).toSelf().inSingletonScope();
    bind(OrchServiceRegistry).toSelf().inSingletonScope();
    // Remote clusters (remote secrets) merged with the local registry; they also need RemoteClustersOptionsToken.
    bind(MulticlusterMetrics).toSelf().inSingletonScope();
    bind(MulticlusterRegistry).toSelf().inSingletonScope();
    bind(RemoteClusterController).toSelf().inSingletonScope();
  });
}
