/*
 * The install manifest: the orchestrator objects an operator spec stands for. Every object
 * carries `app.kubernetes.io/part-of: mesh` (uninstall --purge finds them by it); every object
 * of one revision also carries `mesh.io/rev: <revision>` (`default` without --revision), which
 * plain uninstall deletes by. The CRDs and the system namespace are shared by revisions and
 * carry only the first. Revisioned names end in `-<revision>` so revisions install side by side.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { UserError } from '../shared/user-error';
import { isTree, OperatorSpec, Tree } from './operator';
import { cniPaths } from './platform';
import { REVISION_LABEL } from '../model/mesh-labels';
export { REVISION_LABEL };

export const PART_OF_LABEL = 'app.kubernetes.io/part-of';
export const PART_OF_VALUE = 'mesh';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';

export interface ManifestObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

/** The order objects are printed and applied in: what others need first. */
const KIND_ORDER = [
  'CustomResourceDefinition',
  'Namespace',
  'ServiceAccount',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
  'ConfigMap',
  'Service',
  'Deployment',
  'DaemonSet',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
];

export const revisionOf = (spec: OperatorSpec) => spec.revision || 'default';
const suffixed = (name: string, spec: OperatorSpec) => (spec.revision ? `${name}-${spec.revision}` : name);

/** The chart values the renderer works from (what `manifest translate` prints). */
export function translateValues(spec: OperatorSpec): Tree {
  const global = isTree(spec.values.global) ? spec.values.global : {};
  return {
    ...spec.values,
    global: { ...global, hub: spec.hub, tag: spec.tag, meshNamespace: spec.namespace, istioNamespace: spec.namespace },
    revision: spec.revision,
    profile: spec.profile,
    base: { enabled: spec.components.base.enabled },
    pilot: { ...(isTree(spec.values.pilot) ? spec.values.pilot : {}), enabled: spec.components.pilot.enabled, replicaCount: spec.components.pilot.k8s.replicaCount, ...(spec.components.pilot.k8s.resources ? { resources: spec.components.pilot.k8s.resources } : {}), ...(spec.components.pilot.k8s.env ? { env: spec.components.pilot.k8s.env } : {}) },
    cni: { ...(isTree(spec.values.cni) ? spec.values.cni : {}), enabled: spec.components.cni.enabled, namespace: spec.components.cni.namespace ?? spec.namespace },
    meshConfig: spec.meshConfig,
  };
}

/** The mesh CRDs, read from `<manifests>/crds/*.yaml` (written by scripts/generate-crds.js). */
export function readCrds(manifestsDir: string): ManifestObject[] {
  const dir = path.join(manifestsDir, 'crds');
  if (!fs.existsSync(dir)) throw new UserError(`no CRDs: ${dir} does not exist (see --manifests)`);
  const out: ManifestObject[] = [];
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort()) {
    for (const doc of parseAllDocuments(fs.readFileSync(path.join(dir, file), 'utf8'))) {
      if ('errors' in doc && doc.errors.length > 0) throw new UserError(`${path.join(dir, file)}: not valid YAML: ${doc.errors[0].message.split('\n')[0]}`);
      const obj = doc.toJS() as unknown;
      if (isTree(obj) && obj.kind === 'CustomResourceDefinition') out.push(obj as unknown as ManifestObject);
    }
  }
  return out;
}

function labelled(obj: ManifestObject, spec: OperatorSpec, revisioned = true): ManifestObject {
  obj.metadata.labels = {
    ...obj.metadata.labels,
    [PART_OF_LABEL]: PART_OF_VALUE,
    [MANAGED_BY_LABEL]: 'meshctl',
    ...(revisioned ? { [REVISION_LABEL]: revisionOf(spec) } : {}),
  };
  return obj;
}

/** The ClusterRole of meshd: what its registry, config store, webhooks, CA and leader election use. */
function daemonRules(): Tree[] {
  const read = ['get', 'list', 'watch'];
  return [
    { apiGroups: [''], resources: ['pods', 'services', 'endpoints', 'namespaces', 'nodes', 'secrets', 'serviceaccounts'], verbs: read },
    { apiGroups: [''], resources: ['configmaps'], verbs: [...read, 'create', 'update', 'patch', 'delete'] },
    { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: read },
    { apiGroups: ['apps'], resources: ['deployments', 'replicasets', 'statefulsets', 'daemonsets'], verbs: read },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: [...read, 'create', 'update', 'patch', 'delete'] },
    { apiGroups: ['networking.mesh.io', 'security.mesh.io'], resources: ['*'], verbs: [...read, 'create', 'update', 'patch', 'delete'] },
    { apiGroups: ['admissionregistration.k8s.io'], resources: ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'], verbs: [...read, 'update', 'patch'] },
    { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: read },
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests', 'certificatesigningrequests/approval', 'certificatesigningrequests/status'], verbs: [...read, 'create', 'update', 'delete'] },
  ];
}

/** The injector's `config` key: policy and the sidecar template the webhook expands. */
function injectorConfig(spec: OperatorSpec): string {
  return stringify({
    policy: 'enabled',
    defaultTemplates: ['sidecar'],
    alwaysInjectSelector: [],
    neverInjectSelector: [],
    injectedAnnotations: {},
    templates: {
      sidecar: [
        'spec:',
        '  containers:',
        '  - name: mesh-proxy',
        '    image: "{{ .Values.global.hub }}/proxyv2:{{ .Values.global.tag }}"',
        '    args: ["proxy", "sidecar", "--domain", "$(POD_NAMESPACE).svc.cluster.local"]',
        '    env:',
        '    - name: POD_NAME',
        '      valueFrom: {fieldRef: {fieldPath: metadata.name}}',
        '    - name: POD_NAMESPACE',
        '      valueFrom: {fieldRef: {fieldPath: metadata.namespace}}',
        `    - name: PILOT_ADDRESS`,
        `      value: ${suffixed('meshd', spec)}.${spec.namespace}.svc:15012`,
        '',
      ].join('\n'),
    },
  });
}

function meshConfigText(spec: OperatorSpec): string {
  const base: Tree = { rootNamespace: spec.namespace, trustDomain: 'cluster.local', defaultConfig: { discoveryAddress: `${suffixed('meshd', spec)}.${spec.namespace}.svc:15012` } };
  return stringify(mergeTrees(base, spec.meshConfig));
}

function mergeTrees(a: Tree, b: Tree): Tree {
  const out: Tree = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = isTree(v) && isTree(out[k]) ? mergeTrees(out[k] as Tree, v) : v;
  return out;
}

const DAEMON_PORTS = [
  { name: 'grpc-xds', port: 15010 },
  { name: 'https-dns', port: 15012 },
  { name: 'http-monitoring', port: 15014 },
  { name: 'https-webhook', port: 15017 },
  { name: 'http-debug', port: 8080 },
];

function daemonObjects(spec: OperatorSpec): ManifestObject[] {
  const ns = spec.namespace;
  const name = suffixed('meshd', spec);
  const appLabels = { app: 'meshd', [REVISION_LABEL]: revisionOf(spec) };
  const global = isTree(spec.values.global) ? spec.values.global : {};
  const env: Tree[] = [
    { name: 'REVISION', value: revisionOf(spec) },
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    { name: 'INJECTION_WEBHOOK_CONFIG_NAME', value: suffixed('mesh-sidecar-injector', spec) },
    { name: 'VALIDATION_WEBHOOK_CONFIG_NAME', value: suffixed(`mesh-validator`, spec) + `-${ns}` },
    ...Object.entries(spec.components.pilot.k8s.env ?? {}).map(([k, v]) => ({ name: k, value: v })),
  ];
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: ns } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `${name}-${ns}` }, rules: daemonRules() },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `${name}-${ns}` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${name}-${ns}` },
      subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: ns },
      spec: { selector: appLabels, ports: DAEMON_PORTS.map((p) => ({ name: p.name, port: p.port, targetPort: p.port, protocol: 'TCP' })) },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace: ns },
      spec: {
        replicas: spec.components.pilot.k8s.replicaCount,
        selector: { matchLabels: appLabels },
        template: {
          metadata: { labels: { ...appLabels, [PART_OF_LABEL]: PART_OF_VALUE } },
          spec: {
            serviceAccountName: name,
            containers: [
              {
                name: 'discovery',
                image: `${spec.hub}/pilot:${spec.tag}`,
                args: ['discovery', '--monitoringAddr=:15014', '--log_output_level=default:info', ...(global.logAsJson === true ? ['--log_as_json'] : [])],
                env,
                ports: DAEMON_PORTS.map((p) => ({ name: p.name.slice(0, 15), containerPort: p.port, protocol: 'TCP' })),
                readinessProbe: { httpGet: { path: '/ready', port: 8080 }, initialDelaySeconds: 1, periodSeconds: 3, timeoutSeconds: 5 },
                ...(spec.components.pilot.k8s.resources ? { resources: spec.components.pilot.k8s.resources } : {}),
              },
            ],
          },
        },
      },
    },
  ];
}

function configObjects(spec: OperatorSpec): ManifestObject[] {
  const values = translateValues(spec);
  return [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: suffixed('mesh', spec), namespace: spec.namespace }, data: { mesh: meshConfigText(spec) } },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: suffixed('mesh-sidecar-injector', spec), namespace: spec.namespace },
      data: { config: injectorConfig(spec), values: JSON.stringify(values, null, 2) },
    },
  ];
}

/** Where the webhooks call: the local meshd Service, or the remote one (remote profile). */
function webhookClient(spec: OperatorSpec, pathName: string): Tree {
  const global = isTree(spec.values.global) ? spec.values.global : {};
  if (!spec.components.pilot.enabled) {
    const remote = typeof global.remotePilotAddress === 'string' ? global.remotePilotAddress : '';
    if (remote === '') throw new UserError('without the pilot component the webhooks need values.global.remotePilotAddress (the remote meshd address)');
    return { url: `https://${remote}:15017${pathName}` };
  }
  return { service: { name: suffixed('meshd', spec), namespace: spec.namespace, path: pathName, port: 443 } };
}

function webhookObjects(spec: OperatorSpec): ManifestObject[] {
  const rev = revisionOf(spec);
  const namespaceSelector = spec.revision
    ? { matchExpressions: [{ key: REVISION_LABEL, operator: 'In', values: [rev] }, { key: 'mesh-injection', operator: 'DoesNotExist' }] }
    : { matchExpressions: [{ key: 'mesh-injection', operator: 'In', values: ['enabled'] }] };
  const out: ManifestObject[] = [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: suffixed('mesh-sidecar-injector', spec) },
      webhooks: [
        {
          name: `${rev}.sidecar-injector.mesh.io`,
          clientConfig: webhookClient(spec, '/inject'),
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
          namespaceSelector,
          sideEffects: 'None',
          failurePolicy: 'Fail',
          reinvocationPolicy: 'Never',
          admissionReviewVersions: ['v1'],
        },
      ],
    },
  ];
  if (spec.components.pilot.enabled) {
    out.push({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: `${suffixed('mesh-validator', spec)}-${spec.namespace}` },
      webhooks: [
        {
          name: `rev.validation.mesh.io`,
          clientConfig: webhookClient(spec, '/validate'),
          rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['networking.mesh.io', 'security.mesh.io'], apiVersions: ['*'], resources: ['*'] }],
          objectSelector: { matchExpressions: [{ key: REVISION_LABEL, operator: 'In', values: [rev] }] },
          sideEffects: 'None',
          failurePolicy: 'Ignore',
          admissionReviewVersions: ['v1'],
        },
      ],
    });
  }
  return out;
}

function cniObjects(spec: OperatorSpec): ManifestObject[] {
  const ns = spec.components.cni.namespace ?? spec.namespace;
  const name = suffixed('mesh-cni-node', spec);
  const appLabels = { 'k8s-app': 'mesh-cni-node', [REVISION_LABEL]: revisionOf(spec) };
  const paths = cniPaths(spec);
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: ns } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name },
      rules: [{ apiGroups: [''], resources: ['pods', 'nodes', 'namespaces'], verbs: ['get', 'list', 'watch'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
    },
    {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name, namespace: ns },
      spec: {
        selector: { matchLabels: appLabels },
        template: {
          metadata: { labels: { ...appLabels, [PART_OF_LABEL]: PART_OF_VALUE } },
          spec: {
            serviceAccountName: name,
            hostNetwork: true,
            containers: [
              {
                name: 'install-cni',
                image: `${spec.hub}/install-cni:${spec.tag}`,
                args: ['--log_output_level=default:info'],
                ...(spec.components.cni.k8s?.resources ? { resources: spec.components.cni.k8s.resources } : {}),
                volumeMounts: [
                  { name: 'cni-bin-dir', mountPath: '/host/opt/cni/bin' },
                  { name: 'cni-net-dir', mountPath: '/host/etc/cni/net.d' },
                ],
              },
            ],
            volumes: [
              { name: 'cni-bin-dir', hostPath: { path: paths.binDir } },
              { name: 'cni-net-dir', hostPath: { path: paths.confDir } },
            ],
          },
        },
      },
    },
  ];
}

/** Every object of the install, labelled and in apply order (CRDs, namespaces, RBAC, config, workloads, webhooks). */
export function renderManifest(spec: OperatorSpec, manifestsDir: string): ManifestObject[] {
  const objects: ManifestObject[] = [];
  const anything = spec.components.base.enabled || spec.components.pilot.enabled || spec.components.cni.enabled;
  if (spec.components.base.enabled) objects.push(...readCrds(manifestsDir).map((crd) => labelled(crd, spec, false)));
  if (anything) objects.push(labelled({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: spec.namespace } }, spec, false));
  if (spec.components.pilot.enabled) objects.push(...daemonObjects(spec).map((o) => labelled(o, spec)));
  // Without a local meshd the config and webhooks serve a remote one (the remote profile).
  const remote = isTree(spec.values.global) && typeof spec.values.global.remotePilotAddress === 'string' && spec.values.global.remotePilotAddress !== '';
  if (spec.components.pilot.enabled || remote || spec.profile === 'remote') {
    objects.push(...configObjects(spec).map((o) => labelled(o, spec)));
    objects.push(...webhookObjects(spec).map((o) => labelled(o, spec)));
  }
  if (spec.components.cni.enabled) {
    const cniNs = spec.components.cni.namespace;
    if (cniNs && cniNs !== spec.namespace) objects.push(labelled({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: cniNs } }, spec, false));
    objects.push(...cniObjects(spec).map((o) => labelled(o, spec)));
  }
  const rank = (o: ManifestObject) => KIND_ORDER.indexOf(o.kind);
  return objects
    .map((o, i) => ({ o, i }))
    .sort((a, b) => rank(a.o) - rank(b.o) || a.i - b.i)
    .map((x) => x.o);
}

/** The objects as one YAML stream. */
export function manifestYaml(objects: ManifestObject[]): string {
  return objects.map((o) => `---\n${stringify(o, { lineWidth: 0, aliasDuplicateObjects: false })}`).join('');
}

export const objectRef = (o: { kind: string; metadata: { name?: string; namespace?: string } }) => `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
