import { KindDefinition } from '../kind';
import { AuthorizationPolicyKind } from './authorization-policy';
import { DestinationRuleKind } from './destination-rule';
import { GatewayKind } from './gateway';
import { PeerAuthenticationKind } from './peer-authentication';
import { RequestAuthenticationKind } from './request-authentication';
import { ServiceEntryKind } from './service-entry';
import { SidecarKind } from './sidecar';
import { VirtualServiceKind } from './virtual-service';
import { WorkloadEntryKind } from './workload-entry';
import { WorkloadGroupKind } from './workload-group';

/** Every resource kind the mesh reads. */
export const KINDS: KindDefinition[] = [
  RequestAuthenticationKind,
  AuthorizationPolicyKind,
  PeerAuthenticationKind,
  VirtualServiceKind,
  DestinationRuleKind,
  ServiceEntryKind,
  WorkloadEntryKind,
  WorkloadGroupKind,
  SidecarKind,
  GatewayKind,
] as KindDefinition[];
