import { createHash } from 'node:crypto';
import type { ResourceRegistry } from './resources';

/*
 * OpenAPI documents, as much of them as kubectl reads: the v3 index (/openapi/v3, one entry
 * per group/version with a hash), per group/version documents whose paths declare the
 * `fieldValidation` parameter (so kubectl validates on the server), schemas of custom
 * types from their CRDs, and a v2 document for older clients.
 */

type Doc = Record<string, unknown>;

function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

export function openApiV3Index(registry: ResourceRegistry): Doc {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const [group, versions] of registry.groups()) {
    for (const version of versions) {
      const path = gvPath(group, version);
      const hash = createHash('sha512').update(JSON.stringify(openApiV3Document(registry, path))).digest('hex').slice(0, 64).toUpperCase();
      paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` };
    }
  }
  return { paths };
}

const FIELD_VALIDATION = {
  name: 'fieldValidation',
  in: 'query',
  description: 'fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields.',
  schema: { type: 'string', uniqueItems: true },
};

function schemaName(group: string, version: string, kind: string): string {
  const reversed = group ? group.split('.').reverse().join('.') : 'core';
  return group ? `${reversed}.${version}.${kind}` : `io.k8s.api.core.${version}.${kind}`;
}

export function openApiV3Document(registry: ResourceRegistry, path: string): Doc | undefined {
  const m = /^(?:api\/([^/]+)|apis\/([^/]+)\/([^/]+))$/.exec(path);
  if (!m) return undefined;
  const [group, version] = m[1] ? ['', m[1]] : [m[2], m[3]];
  const types = registry.inGroupVersion(group, version);
  if (types.length === 0) return undefined;
  const paths: Doc = {};
  const schemas: Doc = {};
  for (const t of types) {
    const name = schemaName(group, version, t.kind);
    const gvk = [{ group, version, kind: t.kind }];
    const crdSchema = t.crd?.spec.versions.find((v) => v.name === version)?.schema?.openAPIV3Schema;
    schemas[name] = { ...(crdSchema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }), 'x-kubernetes-group-version-kind': gvk };
    const ref = { $ref: `#/components/schemas/${name}` };
    const body = { content: { 'application/json': { schema: ref } } };
    const ok = { '200': { description: 'OK', content: { 'application/json': { schema: ref } } } };
    const nameParam = { name: 'name', in: 'path', required: true, schema: { type: 'string' } };
    // kubectl looks for fieldValidation among the PATCH operation's own parameters.
    const action = (verb: string, withName = false) => ({
      'x-kubernetes-action': verb,
      'x-kubernetes-group-version-kind': gvk[0],
      parameters: withName ? [FIELD_VALIDATION, nameParam] : [FIELD_VALIDATION],
      responses: ok,
    });
    const base = `/${gvPath(group, version)}${t.namespaced ? '/namespaces/{namespace}' : ''}/${t.plural}`;
    paths[base] = { get: action('list'), post: { ...action('post'), requestBody: body } };
    paths[`${base}/{name}`] = {
      get: action('get', true),
      put: { ...action('put', true), requestBody: body },
      patch: { ...action('patch', true), requestBody: { content: { 'application/merge-patch+json': { schema: { type: 'object' } } } } },
      delete: action('delete', true),
    };
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths, components: { schemas } };
}

export function openApiV2(registry: ResourceRegistry): Doc {
  const definitions: Doc = {};
  for (const t of registry.all()) {
    for (const version of t.versions) {
      const crdSchema = t.crd?.spec.versions.find((v) => v.name === version)?.schema?.openAPIV3Schema;
      definitions[schemaName(t.group, version, t.kind)] = {
        ...(crdSchema ?? { type: 'object' }),
        'x-kubernetes-group-version-kind': [{ group: t.group, version, kind: t.kind }],
      };
    }
  }
  return { swagger: '2.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths: {}, definitions };
}
