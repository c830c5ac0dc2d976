import { ContainerModule } from 'inversify';
import {
  ClusterContributor, EndpointContributor, HttpConnectionManagerContributor, HttpFilterContributor, NetworkFilterContributor, XdsGeneratorToken,
} from '../model/generator';
import { declareContributionPoint } from '../plugins/contribution-provider';
import { GrpcGenerator, GrpcGeneratorOptionsToken } from './grpc/generator';
import { NameTableGenerator } from './nds';
import { GrpcOptionsFromMesh, SidecarOptionsFromMesh } from './options-from-mesh';
import { SidecarGenerator, SidecarGeneratorOptionsToken } from './sidecar';
import { XdsGenerators } from './xds-generators';

/** The points plugins hook into generated config (DESIGN.md §4). */
const CONTRIBUTION_POINTS = [
  NetworkFilterContributor, HttpFilterContributor, ClusterContributor, EndpointContributor, HttpConnectionManagerContributor, XdsGeneratorToken,
];

/** The xDS generators and their contribution points. */
export function generatorsModule(): ContainerModule {
  return new ContainerModule((bind) => {
    for (const point of CONTRIBUTION_POINTS) declareContributionPoint(bind, point);
    bind(SidecarGeneratorOptionsToken).to(SidecarOptionsFromMesh).inSingletonScope();
    bind(SidecarGenerator).toSelf().inSingletonScope();
    bind(GrpcGeneratorOptionsToken).to(GrpcOptionsFromMesh).inSingletonScope();
    bind(GrpcGenerator).toSelf().inSingletonScope();
    bind(NameTableGenerator).toSelf().inSingletonScope();
    bind(XdsGenerators).toSelf().inSingletonScope();
  });
}
