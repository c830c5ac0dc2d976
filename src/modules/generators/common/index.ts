export {
  buildLoadAssignment, buildOutboundClusters, buildVirtualHost, OutboundClusterOptions, VirtualHostOptions,
} from './clusters';
