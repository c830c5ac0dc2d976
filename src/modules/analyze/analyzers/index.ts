import { interfaces } from 'inversify';
import { Analyzer } from '../analyzer';
import { CaCertificateAnalyzer } from './destinationrule-ca';
import { ConflictingGatewayAnalyzer } from './conflicting-gateway';
import { IngressGatewayPortAnalyzer } from './gateway-port';
import { PortNameAnalyzer } from './service-port-name';
import { SidecarSelectorAnalyzer } from './sidecar-selector';
import { VirtualServiceGatewayAnalyzer } from './virtualservice-gateway';
import { TelemetrySelectorAnalyzer } from './telemetry-selector';
import { ApplicationUidAnalyzer } from './application-uid';
import { ServiceEntryAddressesAnalyzer } from './serviceentry-addresses';
import { SubsetSelectPodAnalyzer } from './destinationrule-subset';
import { GatewaySecretAnalyzer } from './gateway-secret';
import { GatewayCertificateAnalyzer } from './gateway-certificate';
import { ConflictingServiceEntryProtocolAnalyzer } from './serviceentry-protocol';
import { VirtualServiceDestinationRuleAnalyzer } from './virtualservice-destinationrule';
import { DeploymentMultiServiceAnalyzer } from './deployment-services';
import { DeprecationAnalyzer } from './deprecation';
import { VirtualServiceDestinationHostAnalyzer } from './virtualservice-destination-host';
import { ConflictingMeshGatewayHostsAnalyzer } from './virtualservice-mesh-hosts';
import { AuthorizationPoliciesAnalyzer } from './authorization-policies';
import { InjectionAnalyzer } from './injection';
import { AnnotationsAnalyzer } from './annotations';

/** The mesh's own analyzers, bound to the Analyzer contribution point. */
export const BUILT_IN_ANALYZERS: interfaces.Newable<Analyzer>[] = [
  IngressGatewayPortAnalyzer,
  CaCertificateAnalyzer,
  ConflictingGatewayAnalyzer,
  VirtualServiceGatewayAnalyzer,
  SidecarSelectorAnalyzer,
  PortNameAnalyzer,
  TelemetrySelectorAnalyzer,
  ApplicationUidAnalyzer,
  ServiceEntryAddressesAnalyzer,
  SubsetSelectPodAnalyzer,
  GatewaySecretAnalyzer,
  GatewayCertificateAnalyzer,
  ConflictingServiceEntryProtocolAnalyzer,
  VirtualServiceDestinationRuleAnalyzer,
  DeploymentMultiServiceAnalyzer,
  DeprecationAnalyzer,
  VirtualServiceDestinationHostAnalyzer,
  ConflictingMeshGatewayHostsAnalyzer,
  AuthorizationPoliciesAnalyzer,
  InjectionAnalyzer,
  AnnotationsAnalyzer,
];
