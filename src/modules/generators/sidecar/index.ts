export { SidecarGenerator } from './generator';
export { SidecarGeneratorOptions } from './options';
export { BLACKHOLE_CLUSTER, INBOUND_PASSTHROUGH_CLUSTER, PASSTHROUGH_CLUSTER } from './clusters';
export { VIRTUAL_INBOUND, VIRTUAL_OUTBOUND } from './listeners';
export { OutboundPort, SidecarScope, sidecarScope } from './scope';
