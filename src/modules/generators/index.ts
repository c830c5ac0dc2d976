/** The xDS generators (Envoy sidecar, proxyless gRPC, name table) and the points plugins contribute to. */
export { generatorsModule } from './module';
export { XdsGenerators } from './xds-generators';
