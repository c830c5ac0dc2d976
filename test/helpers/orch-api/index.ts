/*
 * The in-process orchestrator API server for tests and benchmarks: speaks the real REST
 * protocol (discovery, CRUD, list/watch with resourceVersions and bookmarks, patches,
 * server-side apply, CRDs, admission webhooks) over TLS, so @kubernetes/client-node and
 * kubectl work against it unmodified. See README.md beside this file.
 */
export { OrchApiServer, startOrchApiServer } from './server';
export type { FailureOptions, RequestFilter, RequestLogEntry, StartOptions } from './server';
export type { WebhookCall } from './admission';
export type { AccessRule } from './access-review';
export { NODE_LABELS, NODE_NAME, POD_IP_ANNOTATION, type PodIpAllocator } from './controllers';
export type { Impersonation, PortForwardRegistry } from './server';
export type { ForwardTarget } from './portforward';
