import { ContainerModule } from 'inversify';
import { CaptureJob } from './capture-job';

/** Traffic capture: `pilot-agent mesh-iptables` resolves the job with its flags bound. */
export function iptablesModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(CaptureJob).toSelf().inSingletonScope();
  });
}
