/**
 * What the agent writes to start a proxy: the Envoy bootstrap and command line, and the
 * bootstrap proxyless gRPC applications read (GRPC_XDS_BOOTSTRAP).
 */
export { BootstrapError } from './errors';
export {
  DEFAULT_SDS_SOCKET_PATH,
  ENVOY_BOOTSTRAP_FILE,
  EnvoyBootstrapOptions,
  IpFamily,
  defaultEnvoyBootstrap,
  proxyIpFamily,
  xdsSocketPath,
} from './envoy-bootstrap';
export { BOOTSTRAP_TYPE, EnvoyBootstrapInputs, buildEnvoyBootstrap, checkBootstrap, readBootstrapOverride, writeEnvoyBootstrap } from './envoy-bootstrap-file';
export { ENVOY_LOG_LEVELS, EnvoyArgsOptions, EnvoyLogLevel, ProxyLogLevels, envoyArgs, parseProxyLogLevel } from './envoy-args';
export { BootstrapTemplateError, TEMPLATE_PLACEHOLDERS, TemplatePlaceholder, renderBootstrapTemplate, templateValues } from './template';
export {
  GRPC_CERT_REFRESH_INTERVAL,
  GRPC_SERVER_LISTENER_TEMPLATE,
  GrpcBootstrap,
  GrpcBootstrapOptions,
  buildGrpcBootstrap,
  validateGrpcBootstrap,
  writeGrpcBootstrap,
} from './grpc-bootstrap';
