export { meshctlOrchOptions, MeshctlOrchFlags } from './options';
export { OrchAccess } from './orch-access';
export { PortForwarder } from './port-forwarder';
export { PortForwardError, describeForward, ForwardTargetName } from './forward-stream';
export { LocalForward, LocalForwardOptions } from './local-forward';
export { DEFAULT_POD_HTTP_TIMEOUT_MS, MAX_POD_HTTP_BODY, PodHttpRequest, PodHttpResponse } from './pod-http';
export { PodLike, podRef } from './pod-ref';
export { isReady, isRunning, parsePodTarget, PodTarget, selectorString } from './pod-target';
export { orchAccessModule } from './module';
