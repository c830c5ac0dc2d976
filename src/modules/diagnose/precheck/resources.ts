import type { OrchResource } from '../../orch';

/** The orchestrator resources precheck reads beside the core ones of the orch area. */
export const DEPLOYMENTS: OrchResource = { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', namespaced: true };
export const CUSTOM_RESOURCE_DEFINITIONS: OrchResource = { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false };
