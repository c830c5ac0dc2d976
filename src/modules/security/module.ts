import { ContainerModule } from 'inversify';
import { DaemonKeySets, DaemonKeySetsOptionsToken } from './authn';
import { AuthzOptionsToken } from './authz';
import { MeshTlsAlpnContributor, MtlsOptionsToken } from './mtls';
import { declareContributionPoint } from '../plugins/contribution-provider';
import { AuthzMetrics } from './authz-metrics';
import { DaemonCaSettings, KeySetOptionsFromSettings, MeshAuthzOptions, MeshMtlsOptions } from './mesh-options';

/** The security pieces the daemon uses: its key sets (jwt_authn), the authz and mTLS options of generated config, the CA's settings. */
export function securityModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(DaemonKeySetsOptionsToken).to(KeySetOptionsFromSettings).inSingletonScope();
    bind(DaemonKeySets).toSelf().inSingletonScope();
    bind(AuthzMetrics).toSelf().inSingletonScope();
    bind(AuthzOptionsToken).to(MeshAuthzOptions).inSingletonScope();
    declareContributionPoint(bind, MeshTlsAlpnContributor);
    bind(MtlsOptionsToken).to(MeshMtlsOptions).inSingletonScope();
    bind(DaemonCaSettings).toSelf().inSingletonScope();
  });
}
