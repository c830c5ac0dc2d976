/** The application's probes, answered on the agent's status port (MESH_ORCH_APP_PROBERS). */
export { APP_PROBER_PATH, AppProber, AppProbers, AppProbersError, GrpcAction, HttpGetAction, HttpHeader, TcpSocketAction, parseAppProbers } from './app-probers';
export { APP_HEALTH_PREFIX, AppProbeHandler, AppProbeHandlerOptions } from './app-probe-handler';
export { ProbeOutcome } from './outcome';
export { probeHttp, HttpProbeContext } from './http-probe';
export { probeTcp } from './tcp-probe';
export { probeGrpc, HEALTH_CHECK_METHOD, SERVING_STATUS, encodeHealthCheckRequest, decodeHealthCheckStatus } from './grpc-probe';
