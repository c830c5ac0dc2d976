export { SidecarGenerator } from './generator';
export { SidecarGeneratorOptions, SidecarGeneratorOptionsToken } from './options';
export { DEFAULT_PATH_NORMALIZATION, PATH_NORMALIZATION_MODES, PathNormalizationMode } from './path-normalization';
export { BLACKHOLE_CLUSTER, INBOUND_PASSTHROUGH_CLUSTER, PASSTHROUGH_CLUSTER } from './clusters';
export { VIRTUAL_INBOUND, VIRTUAL_OUTBOUND } from './listeners';
export { OutboundPort, SidecarScope, sidecarScope } from './scope';
