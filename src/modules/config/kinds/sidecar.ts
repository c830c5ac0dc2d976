import { Type } from 'class-transformer';
import { IsArray, IsDefined, IsIn, IsOptional, IsString, ValidateNested } from 'class-validator';
import { isIP } from 'node:net';
import { FieldIssue, KindDefinition, NETWORKING_VERSIONS } from '../kind';
import { IsPortNumber, IsStringMap } from './common';
import { ConnectionPoolSettings } from './destination-rule';
import { checkServerTls, namespacedHostProblem, ServerTLSSettings } from './gateway';
import { PROTOCOLS } from './service-entry';
import { Destination } from './virtual-service';

const CAPTURE_MODES = ['DEFAULT', 'IPTABLES', 'NONE'] as const;

/** Like a service port, but the name is optional. */
export class SidecarPort {
  @IsPortNumber() number!: number;
  @IsOptional() @IsString() protocol?: string;
  @IsOptional() @IsString() name?: string;
  @IsOptional() @IsPortNumber() targetPort?: number;
}

export class IngressListener {
  @IsDefined({ message: 'required' }) @ValidateNested() @Type(() => SidecarPort) port!: SidecarPort;
  @IsOptional() @IsString() bind?: string;
  @IsOptional() @IsIn(CAPTURE_MODES) captureMode?: (typeof CAPTURE_MODES)[number];
  /** 127.0.0.1:PORT, 0.0.0.0:PORT, [::1]:PORT, [::]:PORT or unix:///path. */
  @IsOptional() @IsString() defaultEndpoint?: string;
  @IsOptional() @ValidateNested() @Type(() => ServerTLSSettings) tls?: ServerTLSSettings;
  @IsOptional() @ValidateNested() @Type(() => ConnectionPoolSettings) connectionPool?: ConnectionPoolSettings;
}

export class EgressListener {
  /** Unset: the catch-all listener for every port. */
  @IsOptional() @ValidateNested() @Type(() => SidecarPort) port?: SidecarPort;
  @IsOptional() @IsString() bind?: string;
  @IsOptional() @IsIn(CAPTURE_MODES) captureMode?: (typeof CAPTURE_MODES)[number];
  /** `namespace/dnsName`; required, checked with a clearer message. */
  @IsOptional() @IsArray() @IsString({ each: true }) hosts?: string[];
}

export class OutboundTrafficPolicy {
  @IsOptional() @IsIn(['REGISTRY_ONLY', 'ALLOW_ANY']) mode?: 'REGISTRY_ONLY' | 'ALLOW_ANY';
  @IsOptional() @ValidateNested() @Type(() => Destination) egressProxy?: Destination;
}

export class SidecarWorkloadSelector {
  @IsStringMap() labels!: Record<string, string>;
}

/** What a workload's proxy listens on and may reach: networking.mesh.io Sidecar. */
export class SidecarSpec {
  @IsOptional() @ValidateNested() @Type(() => SidecarWorkloadSelector) workloadSelector?: SidecarWorkloadSelector;
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => IngressListener) ingress?: IngressListener[];
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => EgressListener) egress?: EgressListener[];
  @IsOptional() @ValidateNested() @Type(() => OutboundTrafficPolicy) outboundTrafficPolicy?: OutboundTrafficPolicy;
  @IsOptional() @ValidateNested() @Type(() => ConnectionPoolSettings) inboundConnectionPool?: ConnectionPoolSettings;
}

const DEFAULT_ENDPOINT = /^(127\.0\.0\.1|0\.0\.0\.0|\[::1\]|\[::\]):(\d+)$/;

function checkBind(bind: string | undefined, at: string): FieldIssue[] {
  if (bind === undefined || bind === '' || isIP(bind) || (bind.startsWith('unix://') && bind.length > 7)) return [];
  return [{ field: at, message: `"${bind}" is not an IP address or unix:///path` }];
}

function checkProtocol(port: SidecarPort | undefined, at: string): FieldIssue[] {
  if (!port?.protocol || (PROTOCOLS as readonly string[]).includes(port.protocol.toUpperCase())) return [];
  return [{ field: `${at}.protocol`, message: `unknown protocol "${port.protocol}" (one of ${PROTOCOLS.join(', ')})` }];
}

function checkSidecar(spec: SidecarSpec): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const ingressKeys = new Set<string>();
  (spec.ingress ?? []).forEach((l, i) => {
    const at = `spec.ingress[${i}]`;
    issues.push(...checkBind(l.bind, `${at}.bind`), ...checkProtocol(l.port, `${at}.port`));
    const key = `${l.bind ?? ''}:${l.port.number}`;
    if (ingressKeys.has(key)) issues.push({ field: `${at}.port.number`, message: `port ${l.port.number} already has an ingress listener on this bind address` });
    ingressKeys.add(key);
    const ep = l.defaultEndpoint;
    if (ep !== undefined && !(ep.startsWith('unix://') && ep.length > 7)) {
      const m = DEFAULT_ENDPOINT.exec(ep);
      if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) {
        issues.push({ field: `${at}.defaultEndpoint`, message: `"${ep}" must be 127.0.0.1:PORT, 0.0.0.0:PORT, [::1]:PORT, [::]:PORT or unix:///path` });
      }
    }
    if (l.tls) {
      if (l.tls.mode && !['SIMPLE', 'MUTUAL', 'OPTIONAL_MUTUAL'].includes(l.tls.mode)) {
        issues.push({ field: `${at}.tls.mode`, message: 'an ingress listener terminates TLS itself: SIMPLE, MUTUAL or OPTIONAL_MUTUAL' });
      } else issues.push(...checkServerTls(l.tls, `${at}.tls`));
    }
  });

  const egress = spec.egress ?? [];
  if (egress.length === 0) issues.push({ field: 'spec.egress', message: 'at least one egress listener is required' });
  const egressKeys = new Set<string>();
  egress.forEach((l, i) => {
    const at = `spec.egress[${i}]`;
    issues.push(...checkBind(l.bind, `${at}.bind`), ...checkProtocol(l.port, `${at}.port`));
    const hosts = l.hosts ?? [];
    if (hosts.length === 0) issues.push({ field: `${at}.hosts`, message: 'at least one namespace/host is required' });
    hosts.forEach((h, j) => {
      const problem = namespacedHostProblem(h, { requireNamespace: true, allowTilde: true });
      if (problem) issues.push({ field: `${at}.hosts[${j}]`, message: problem });
    });
    // Only the last listener may omit the port: it catches whatever the others do not.
    if (!l.port && i !== egress.length - 1) issues.push({ field: at, message: 'only the last egress listener may omit port (the catch-all)' });
    const key = `${l.bind ?? ''}:${l.port?.number ?? '*'}`;
    if (egressKeys.has(key)) issues.push({ field: l.port ? `${at}.port.number` : at, message: 'another egress listener already uses this port and bind address' });
    egressKeys.add(key);
  });

  const otp = spec.outboundTrafficPolicy;
  if (otp?.egressProxy && otp.mode !== 'ALLOW_ANY') {
    issues.push({ field: 'spec.outboundTrafficPolicy.egressProxy', message: 'only applies with mode ALLOW_ANY' });
  }
  return issues;
}

export const SidecarKind: KindDefinition<SidecarSpec> = {
  kind: 'Sidecar',
  group: 'networking.mesh.io',
  versions: NETWORKING_VERSIONS,
  specClass: SidecarSpec,
  check: (r) => checkSidecar(r.spec),
};
