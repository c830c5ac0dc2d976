import { ContainerModule } from 'inversify';
import { GeneratorWarmUp } from './generator-warm-up';
import { MemoryConfigStoreOptionsToken } from '../config';
import { ControlzOptionsToken } from '../ctrlz';
import { DebugHttpServerOptionsToken } from '../debug';
import { MonitoringServer, MonitoringServerOptionsToken } from '../monitoring';
import { OrchClientOptionsToken } from '../orch';
import { OrchRegistryOptionsToken, RegistryOptionsToken, RemoteClustersOptionsToken } from '../registry';
import { LeaderElectionOptionsToken } from '../leader-election';
import { MeshRootsToken, WebhookOptionsToken } from '../webhook';
import { XdsServerOptionsToken } from '../xds/server';
import { XdsConnectionListener } from '../xds/connection-listener';
import { SingletonController } from '../leader-election';
import { AutoRegistrationMetrics, AutoRegistrationSweeper, OrchWorkloadEntryApiSource, WorkloadAutoRegistration, WorkloadEntryApiSourceToken } from './autoregistration';
import { DaemonConfigSources } from './config-sources';
import { Daemon, DaemonToken } from './daemon';
import { DaemonAddresses, DaemonTlsFlagsToken, DaemonTlsFromFlags, RegistriesFromFlags } from './daemon-flags';
import { DaemonSecurity } from './daemon-security';
import { ControlPlaneInstance } from './control-plane-instance';
import { DaemonDebugHandlers } from './debug-handlers';
import { DaemonXdsDebug } from './xds-debug-service';
import { DaemonHttpsServer } from './https-server';
import { OrchClientOptionsFromFlags, OrchRegistryOptionsFromFlags, RemoteClustersOptionsFromFlags } from './orch-options';
import { PipelineMetricsObserver, StoreOptionsWithMetrics } from './observers';
import { PushOptionsFromSettings } from './pipeline-options';
import { PushCoordinator, PushCoordinatorOptionsToken, PushPipelineObserverToken } from './push-coordinator';
import { DaemonReadiness } from './readiness';
import { ControlzOptionsFromFlags, DebugServerOptionsFromSettings, MonitoringOptionsFromSettings } from './server-options';
import { DaemonMeshRoots, LeaderElectionOptionsFromFlags, WebhookOptionsFromFlags } from './webhook-options';
import { XdsServerOptionsFromSettings } from './xds-server';

/**
 * The daemon (`pilot-discovery discovery`): its services and their options, mapped here from
 * the command's DaemonFlags (bound in the command's scope), the settings and the mesh config.
 */
export function discoveryModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(DaemonAddresses).toSelf().inSingletonScope();
    bind(DaemonTlsFlagsToken).to(DaemonTlsFromFlags).inSingletonScope();
    bind(RegistryOptionsToken).to(RegistriesFromFlags).inSingletonScope();
    bind(OrchClientOptionsToken).to(OrchClientOptionsFromFlags).inSingletonScope();
    bind(OrchRegistryOptionsToken).to(OrchRegistryOptionsFromFlags).inSingletonScope();
    bind(RemoteClustersOptionsToken).to(RemoteClustersOptionsFromFlags).inSingletonScope();
    bind(DaemonReadiness).toSelf().inSingletonScope();

    // Config into pushes.
    bind(MemoryConfigStoreOptionsToken).to(StoreOptionsWithMetrics).inSingletonScope();
    bind(DaemonConfigSources).toSelf().inSingletonScope();
    bind(PushCoordinatorOptionsToken).to(PushOptionsFromSettings).inSingletonScope();
    bind(PushPipelineObserverToken).to(PipelineMetricsObserver).inSingletonScope();
    bind(PushCoordinator).toSelf().inSingletonScope();

    // Servers.
    bind(XdsServerOptionsToken).to(XdsServerOptionsFromSettings).inSingletonScope();
    bind(DaemonSecurity).toSelf().inSingletonScope();
    bind(DaemonDebugHandlers).toSelf().inSingletonScope();
    bind(ControlPlaneInstance).toSelf().inSingletonScope();
    bind(DaemonXdsDebug).toSelf().inSingletonScope();
    bind(DebugHttpServerOptionsToken).to(DebugServerOptionsFromSettings).inSingletonScope();
    bind(MonitoringServerOptionsToken).to(MonitoringOptionsFromSettings).inSingletonScope();
    bind(MonitoringServer).toSelf().inSingletonScope();
    bind(DaemonHttpsServer).toSelf().inSingletonScope();
    bind(ControlzOptionsToken).to(ControlzOptionsFromFlags).inSingletonScope();

    // Webhooks and the singleton controllers (trust plumbing) on the orchestrator.
    bind(WebhookOptionsToken).to(WebhookOptionsFromFlags).inSingletonScope();
    bind(LeaderElectionOptionsToken).to(LeaderElectionOptionsFromFlags).inSingletonScope();
    bind(MeshRootsToken).to(DaemonMeshRoots).inSingletonScope();

    // Proxies that register themselves from a WorkloadGroup.
    bind(AutoRegistrationMetrics).toSelf().inSingletonScope();
    bind(WorkloadEntryApiSourceToken).to(OrchWorkloadEntryApiSource).inSingletonScope();
    bind(WorkloadAutoRegistration).toSelf().inSingletonScope();
    bind(XdsConnectionListener).toService(WorkloadAutoRegistration);
    bind(AutoRegistrationSweeper).toSelf().inSingletonScope();
    bind(SingletonController).toService(AutoRegistrationSweeper);

    bind(GeneratorWarmUp).toSelf().inSingletonScope();
    bind(DaemonToken).to(Daemon).inSingletonScope();
  });
}
