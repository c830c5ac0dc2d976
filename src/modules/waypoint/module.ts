import { ContainerModule } from 'inversify';
import { Waypoints } from './waypoints';

/** meshctl's waypoints: Gateways read and written with the command's orchestrator client. */
export function waypointModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(Waypoints).toSelf().inSingletonScope();
  });
}
