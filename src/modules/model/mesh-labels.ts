/**
 * The labels, annotations and names by which the orchestrator's objects say how they join the
 * mesh. Every area reads the same spelling from here.
 */

/** On a namespace (or pod): which control-plane revision serves it. */
export const REVISION_LABEL = 'mesh.io/rev';
/** On a namespace: `enabled` for the default injector, `disabled` to opt out. */
export const INJECTION_LABEL = 'mesh-injection';
/** On a pod, as a label (wins) or an annotation: `true`/`false` overrides the namespace. */
export const INJECT_ANNOTATION = 'sidecar.mesh.io/inject';
/** On a namespace or pod: `ambient` enrols it in the node-proxy data plane. */
export const DATAPLANE_MODE_LABEL = 'mesh.io/dataplane-mode';
/** On a pod: set by the node plugin once its traffic is redirected to the node proxy. */
export const AMBIENT_REDIRECTION_ANNOTATION = 'ambient.mesh.io/redirection';
/** The injected proxy container's name. */
export const PROXY_CONTAINER = 'mesh-proxy';
