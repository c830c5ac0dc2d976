import { ContainerModule } from 'inversify';
import { InjectionChecker } from './check-inject/injection-checker';
import { PodDescriber } from './describe/pod-describer';
import { Precheck } from './precheck/precheck';

/** meshctl's diagnosing services: they read the orchestrator API with the command's client. */
export function diagnoseModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(PodDescriber).toSelf().inSingletonScope();
    bind(InjectionChecker).toSelf().inSingletonScope();
    bind(Precheck).toSelf().inSingletonScope();
  });
}
