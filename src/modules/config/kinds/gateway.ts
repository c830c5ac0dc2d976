import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsDefined, IsIn, IsOptional, IsString, ValidateNested } from 'class-validator';
import { FieldIssue, KindDefinition, NETWORKING_VERSIONS } from '../kind';
import { duplicates, isMeshHost, IsPortNumber, IsStringMap } from './common';
import { PROTOCOLS } from './service-entry';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Our name for the incumbent's ISTIO_MUTUAL is MESH_MUTUAL. */
export const SERVER_TLS_MODES = ['SIMPLE', 'MUTUAL', 'PASSTHROUGH', 'AUTO_PASSTHROUGH', 'MESH_MUTUAL', 'OPTIONAL_MUTUAL'] as const;
export const TLS_VERSIONS = ['TLS_AUTO', 'TLSV1_0', 'TLSV1_1', 'TLSV1_2', 'TLSV1_3'] as const;

export class ServerTLSSettings {
  @IsOptional() @IsBoolean() httpsRedirect?: boolean;
  @IsOptional() @IsIn(SERVER_TLS_MODES) mode?: (typeof SERVER_TLS_MODES)[number];
  @IsOptional() @IsString() serverCertificate?: string;
  @IsOptional() @IsString() privateKey?: string;
  @IsOptional() @IsString() caCertificates?: string;
  @IsOptional() @IsString() caCrl?: string;
  @IsOptional() @IsString() credentialName?: string;
  @IsOptional() @IsArray() @IsString({ each: true }) subjectAltNames?: string[];
  @IsOptional() @IsArray() @IsString({ each: true }) verifyCertificateSpki?: string[];
  @IsOptional() @IsArray() @IsString({ each: true }) verifyCertificateHash?: string[];
  @IsOptional() @IsIn(TLS_VERSIONS) minProtocolVersion?: (typeof TLS_VERSIONS)[number];
  @IsOptional() @IsIn(TLS_VERSIONS) maxProtocolVersion?: (typeof TLS_VERSIONS)[number];
  @IsOptional() @IsArray() @IsString({ each: true }) cipherSuites?: string[];
}

export class GatewayPort {
  @IsPortNumber() number!: number;
  @IsString() protocol!: string;
  @IsString() name!: string;
  @IsOptional() @IsPortNumber() targetPort?: number;
}

export class Server {
  @IsDefined({ message: 'required' }) @ValidateNested() @Type(() => GatewayPort) port!: GatewayPort;
  @IsOptional() @IsString() bind?: string;
  /** Required; checked with a clearer message. */
  @IsOptional() @IsArray() @IsString({ each: true }) hosts?: string[];
  @IsOptional() @ValidateNested() @Type(() => ServerTLSSettings) tls?: ServerTLSSettings;
  @IsOptional() @IsString() name?: string;
  @IsOptional() @IsString() defaultEndpoint?: string;
}

/** A load balancer at the edge of the mesh: networking.mesh.io Gateway. */
export class GatewaySpec {
  @IsOptional() @IsStringMap() selector?: Record<string, string>;
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => Server) servers?: Server[];
}

/**
 * `namespace/dnsName` (namespace `*`, `.` or a name; `~` too where allowed) or, when the
 * namespace is optional, a bare dnsName. Returns the problem, or undefined.
 */
export function namespacedHostProblem(value: string, opts: { requireNamespace: boolean; allowTilde: boolean }): string | undefined {
  const parts = value.split('/');
  if (parts.length > 2 || (parts.length === 1 && opts.requireNamespace)) return `"${value}" must be namespace/host, e.g. ./reviews.default.svc.cluster.local or */*`;
  const [ns, host] = parts.length === 2 ? parts : ['*', parts[0]];
  const nsOk = ns === '*' || ns === '.' || (ns === '~' && opts.allowTilde) || DNS1123_LABEL.test(ns);
  if (!nsOk) return `"${ns}" is not a namespace (a name, *, .${opts.allowTilde ? ' or ~' : ''})`;
  if (!isMeshHost(host)) return `"${host}" is not a host name such as reviews.default.svc.cluster.local or *.example.com`;
  return undefined;
}

/** Server-side TLS, shared with Sidecar ingress listeners. */
export function checkServerTls(tls: ServerTLSSettings, at: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const mode = tls.mode ?? 'SIMPLE';
  const terminates = mode === 'SIMPLE' || mode === 'MUTUAL' || mode === 'OPTIONAL_MUTUAL';
  if (terminates && !tls.credentialName) {
    for (const k of ['serverCertificate', 'privateKey'] as const) {
      if (!tls[k]) issues.push({ field: `${at}.${k}`, message: `required for ${mode} unless credentialName is set` });
    }
    if (mode !== 'SIMPLE' && !tls.caCertificates) issues.push({ field: `${at}.caCertificates`, message: `required for ${mode} unless credentialName is set` });
  }
  if (tls.credentialName && (tls.serverCertificate || tls.privateKey || tls.caCertificates)) {
    issues.push({ field: `${at}.credentialName`, message: 'cannot be combined with serverCertificate, privateKey or caCertificates' });
  }
  const order = (v?: string) => (v && v !== 'TLS_AUTO' ? TLS_VERSIONS.indexOf(v as (typeof TLS_VERSIONS)[number]) : undefined);
  const min = order(tls.minProtocolVersion);
  const max = order(tls.maxProtocolVersion);
  if (min !== undefined && max !== undefined && min > max) issues.push({ field: `${at}.maxProtocolVersion`, message: 'is lower than minProtocolVersion' });
  for (const i of duplicates(tls.cipherSuites ?? [])) issues.push({ field: `${at}.cipherSuites[${i}]`, message: 'listed twice' });
  return issues;
}

function checkServer(s: Server, at: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const hosts = s.hosts ?? [];
  if (hosts.length === 0) issues.push({ field: `${at}.hosts`, message: 'at least one host is required' });
  hosts.forEach((h, i) => {
    const problem = namespacedHostProblem(h, { requireNamespace: false, allowTilde: false });
    if (problem) issues.push({ field: `${at}.hosts[${i}]`, message: problem });
  });
  const protocol = s.port.protocol.toUpperCase();
  if (!(PROTOCOLS as readonly string[]).includes(protocol)) {
    issues.push({ field: `${at}.port.protocol`, message: `unknown protocol "${s.port.protocol}" (one of ${PROTOCOLS.join(', ')})` });
  }
  const secure = protocol === 'HTTPS' || protocol === 'TLS';
  if (secure && !s.tls) issues.push({ field: `${at}.tls`, message: `required for protocol ${protocol}` });
  if (s.tls) {
    if (!secure && !s.tls.httpsRedirect) issues.push({ field: `${at}.tls`, message: `only HTTPS and TLS servers take TLS settings (besides httpsRedirect), not ${protocol}` });
    if (secure) issues.push(...checkServerTls(s.tls, `${at}.tls`));
  }
  return issues;
}

function checkGateway(spec: GatewaySpec): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const servers = spec.servers ?? [];
  if (servers.length === 0) issues.push({ field: 'spec.servers', message: 'at least one server is required' });
  const named = servers.map((s, i) => [s.name, i] as const).filter(([n]) => n !== undefined && n !== '');
  for (const k of duplicates(named.map(([n]) => n))) issues.push({ field: `spec.servers[${named[k][1]}].name`, message: `server name "${named[k][0]}" is used twice` });
  // One port number is one listener, so every server on it must call the port the same.
  const portNames = new Map<number, string>();
  servers.forEach((s, i) => {
    issues.push(...checkServer(s, `spec.servers[${i}]`));
    const first = portNames.get(s.port.number);
    if (first === undefined) portNames.set(s.port.number, s.port.name);
    else if (first !== s.port.name) issues.push({ field: `spec.servers[${i}].port.name`, message: `port ${s.port.number} is already named "${first}"` });
  });
  return issues;
}

export const GatewayKind: KindDefinition<GatewaySpec> = {
  kind: 'Gateway',
  group: 'networking.mesh.io',
  versions: NETWORKING_VERSIONS,
  specClass: GatewaySpec,
  check: (r) => checkGateway(r.spec),
};
