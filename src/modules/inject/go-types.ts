import { FieldDef, GoNil, GoStruct, GoType, OPEN_STRUCT, readField, StructType, T, zeroOf } from './template';
import { canonicalQuantity } from './quantity';

/**
 * The Go types of the injection template's data, as the incumbent's templates see them: the
 * orchestrator's pod types (Go field names over the JSON keys, zero values for absent fields,
 * JSON field order for structToJSON) and the mesh's proto messages (getters that work on nil).
 * Types the templates only pass through are "open": their fields are read by JSON key.
 */

const field = (go: string, type: GoType, json?: string, omitEmpty = true): FieldDef => ({
  go,
  json: json ?? go[0].toLowerCase() + go.slice(1),
  type,
  omitEmpty,
});

const OPEN = T.ptr(OPEN_STRUCT);
const S = T.string;
const strMap = T.map(S);

export const QUANTITY = T.stringer('resource.Quantity', (raw) => (raw === undefined ? '0' : canonicalQuantity(String(raw))));
export const INT_OR_STRING = T.stringer('intstr.IntOrString', (raw) => (raw === undefined ? '0' : String(raw)));

const struct = (name: string, fields: FieldDef[], extra: Partial<StructType> = {}): GoType => T.struct({ name, fields, ...extra });

export const TYPE_META = struct('v1.TypeMeta', [field('Kind', S), field('APIVersion', S, 'apiVersion')]);

export const NAMESPACED_NAME = struct('types.NamespacedName', [field('Namespace', S, 'Namespace', false), field('Name', S, 'Name', false)]);

export const OBJECT_META = struct('v1.ObjectMeta', [
  field('Name', S),
  field('GenerateName', S),
  field('Namespace', S),
  field('SelfLink', S),
  field('UID', S, 'uid'),
  field('ResourceVersion', S),
  field('Generation', T.int64),
  field('CreationTimestamp', T.stringer('v1.Time', (raw) => (raw ? String(raw) : '0001-01-01 00:00:00 +0000 UTC')), 'creationTimestamp', false),
  field('DeletionTimestamp', OPEN),
  field('DeletionGracePeriodSeconds', T.ptr(T.int64)),
  field('Labels', strMap),
  field('Annotations', strMap),
  field('OwnerReferences', T.slice(OPEN_STRUCT)),
  field('Finalizers', T.slice(S)),
  field('ManagedFields', T.slice(OPEN_STRUCT)),
]);

export const CONTAINER_PORT = struct('v1.ContainerPort', [
  field('Name', S),
  field('HostPort', T.int32),
  field('ContainerPort', T.int32, 'containerPort', false),
  field('Protocol', S),
  field('HostIP', S, 'hostIP'),
]);

const ENV_VAR = struct('v1.EnvVar', [field('Name', S, 'name', false), field('Value', S), field('ValueFrom', OPEN)]);

const VOLUME_MOUNT = struct('v1.VolumeMount', [
  field('Name', S, 'name', false),
  field('ReadOnly', T.bool),
  field('RecursiveReadOnly', T.ptr(S)),
  field('MountPath', S, 'mountPath', false),
  field('SubPath', S),
  field('MountPropagation', T.ptr(S)),
  field('SubPathExpr', S),
]);

const RESOURCES = struct('v1.ResourceRequirements', [
  field('Limits', T.map(QUANTITY)),
  field('Requests', T.map(QUANTITY)),
  field('Claims', T.slice(OPEN_STRUCT)),
]);

export const CONTAINER = struct('v1.Container', [
  field('Name', S, 'name', false),
  field('Image', S),
  field('Command', T.slice(S)),
  field('Args', T.slice(S)),
  field('WorkingDir', S),
  field('Ports', T.slice(CONTAINER_PORT)),
  field('EnvFrom', T.slice(OPEN_STRUCT)),
  field('Env', T.slice(ENV_VAR)),
  field('Resources', RESOURCES, 'resources', false),
  field('ResizePolicy', T.slice(OPEN_STRUCT)),
  field('RestartPolicy', T.ptr(S)),
  field('VolumeMounts', T.slice(VOLUME_MOUNT)),
  field('VolumeDevices', T.slice(OPEN_STRUCT)),
  field('LivenessProbe', OPEN),
  field('ReadinessProbe', OPEN),
  field('StartupProbe', OPEN),
  field('Lifecycle', OPEN),
  field('TerminationMessagePath', S),
  field('TerminationMessagePolicy', S),
  field('ImagePullPolicy', S),
  field('SecurityContext', OPEN),
  field('Stdin', T.bool),
  field('StdinOnce', T.bool),
  field('TTY', T.bool, 'tty'),
]);

const VOLUME = T.struct({ name: 'v1.Volume', fields: [field('Name', S, 'name', false)], open: true });

export const POD_SPEC = struct('v1.PodSpec', [
  field('Volumes', T.slice(VOLUME)),
  field('InitContainers', T.slice(CONTAINER)),
  field('Containers', T.slice(CONTAINER), 'containers', false),
  field('EphemeralContainers', T.slice(OPEN_STRUCT)),
  field('RestartPolicy', S),
  field('TerminationGracePeriodSeconds', T.ptr(T.int64)),
  field('ActiveDeadlineSeconds', T.ptr(T.int64)),
  field('DNSPolicy', S, 'dnsPolicy'),
  field('NodeSelector', strMap),
  field('ServiceAccountName', S),
  field('DeprecatedServiceAccount', S, 'serviceAccount'),
  field('AutomountServiceAccountToken', T.ptr(T.bool)),
  field('NodeName', S),
  field('HostNetwork', T.bool),
  field('HostPID', T.bool, 'hostPID'),
  field('HostIPC', T.bool, 'hostIPC'),
  field('ShareProcessNamespace', T.ptr(T.bool)),
  field('SecurityContext', OPEN),
  field('ImagePullSecrets', T.slice(OPEN_STRUCT)),
  field('Hostname', S),
  field('Subdomain', S),
  field('Affinity', OPEN),
  field('SchedulerName', S),
  field('Tolerations', T.slice(OPEN_STRUCT)),
  field('HostAliases', T.slice(OPEN_STRUCT)),
  field('PriorityClassName', S),
  field('Priority', T.ptr(T.int32)),
  field('DNSConfig', OPEN, 'dnsConfig'),
  field('ReadinessGates', T.slice(OPEN_STRUCT)),
  field('RuntimeClassName', T.ptr(S)),
  field('EnableServiceLinks', T.ptr(T.bool)),
  field('PreemptionPolicy', T.ptr(S)),
  field('Overhead', T.map(QUANTITY)),
  field('TopologySpreadConstraints', T.slice(OPEN_STRUCT)),
  field('SetHostnameAsFQDN', T.ptr(T.bool), 'setHostnameAsFQDN'),
  field('OS', OPEN, 'os'),
  field('HostUsers', T.ptr(T.bool)),
  field('SchedulingGates', T.slice(OPEN_STRUCT)),
  field('ResourceClaims', T.slice(OPEN_STRUCT)),
  field('Resources', T.ptr(RESOURCES)),
]);

/**
 * Proto messages: every field has a nil-safe getter (`GetTracing` on a nil message is nil),
 * which the templates chain (`.ProxyConfig.GetTracing.GetTlsSettings`).
 */
function protoGetters(fields: readonly FieldDef[]): StructType['methods'] {
  const methods: Record<string, (self: GoStruct | GoNil) => unknown> = {};
  for (const f of fields) {
    methods[`Get${f.go}`] = (self) => (self instanceof GoStruct ? readField(self, f.go) : zeroOf(f.type));
  }
  return methods;
}

function proto(name: string, fields: FieldDef[]): GoType {
  return T.struct({ name, fields, open: true, methods: protoGetters(fields) });
}

const BOOL_VALUE = proto('wrapperspb.BoolValue', [field('Value', T.bool)]);
const INT32_VALUE = proto('wrapperspb.Int32Value', [field('Value', T.int32)]);
const TLS_SETTINGS = proto('v1alpha3.ClientTLSSettings', [field('CaCertificates', S), field('Mode', OPEN)]);
const TRACING = proto('v1alpha1.Tracing', [field('TlsSettings', T.ptr(TLS_SETTINGS)), field('SampleRate', T.float64)]);
const PROXY_IMAGE = proto('v1beta1.ProxyImage', [field('ImageType', S)]);

export const INTERCEPTION_MODE = T.enum('v1alpha1.ProxyConfig_InboundInterceptionMode', ['REDIRECT', 'TPROXY', 'NONE']);

export const PROXY_CONFIG = proto('v1alpha1.ProxyConfig', [
  field('ConfigPath', S),
  field('BinaryPath', S),
  field('ServiceCluster', S),
  field('DrainDuration', OPEN),
  field('DiscoveryAddress', S),
  field('Concurrency', T.ptr(INT32_VALUE)),
  field('ProxyAdminPort', T.int32),
  field('StatNameLength', T.int32),
  field('StatusPort', T.int32),
  field('InterceptionMode', INTERCEPTION_MODE),
  field('Tracing', T.ptr(TRACING)),
  field('ProxyMetadata', strMap),
  field('HoldApplicationUntilProxyStarts', T.ptr(BOOL_VALUE)),
  field('Image', T.ptr(PROXY_IMAGE)),
]);

export const MESH_CONFIG = proto('v1alpha1.MeshConfig', [
  field('ProxyListenPort', T.int32),
  field('ProxyInboundListenPort', T.int32),
  field('TrustDomain', S),
  field('TrustDomainAliases', T.slice(S)),
  field('RootNamespace', S),
  field('DefaultConfig', T.ptr(PROXY_CONFIG)),
  field('EnablePrometheusMerge', T.ptr(BOOL_VALUE)),
  field('InboundTrafficPolicy', OPEN),
  field('ExtensionProviders', T.slice(OPEN_STRUCT)),
  field('DefaultProviders', OPEN),
]);

/** The template's data (the incumbent's SidecarTemplateData). */
export const TEMPLATE_DATA = struct('inject.SidecarTemplateData', [
  field('TypeMeta', TYPE_META),
  field('DeploymentMeta', NAMESPACED_NAME),
  field('ObjectMeta', OBJECT_META),
  field('Spec', POD_SPEC),
  field('ProxyConfig', T.ptr(PROXY_CONFIG)),
  field('MeshConfig', T.ptr(MESH_CONFIG)),
  field('Values', T.map(T.any)),
  field('Revision', S),
  field('NativeSidecars', T.bool),
  field('ProxyImage', S),
  field('ProxyInitImage', S),
  field('ProxyUID', T.int64),
  field('ProxyGID', T.int64),
  field('InboundTrafficPolicyMode', S),
  field('CompliancePolicy', S),
]);
