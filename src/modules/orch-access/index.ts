/*
 * meshctl's reach into a running mesh through the orchestrator API. In a command:
 *
 *   const access = this.scope.resolve(OrchAccess, [[OrchClientOptionsToken, meshctlOrchOptions(flags)]]);
 *   try {
 *     const pod = await access.resolvePod(args.target, access.namespace(flags.namespace));
 *     const answer = await access.forwarder.request(pod, 15000, { method: 'GET', path: '/config_dump' });
 *   } finally {
 *     await access.close();   // ends forwards and listeners, or the process stays up
 *   }
 */
export { meshctlOrchOptions, MeshctlOrchFlags } from './options';
export { OrchAccess } from './orch-access';
export { PortForwarder } from './port-forwarder';
export { PortForwardError, describeForward, ForwardTargetName } from './forward-stream';
export { LocalForward, LocalForwardOptions } from './local-forward';
export { DEFAULT_POD_HTTP_TIMEOUT_MS, MAX_POD_HTTP_BODY, PodHttpRequest, PodHttpResponse } from './pod-http';
export { PodLike, podRef } from './pod-ref';
export { isReady, isRunning, parsePodTarget, PodTarget, selectorString } from './pod-target';
export { orchAccessModule } from './module';
