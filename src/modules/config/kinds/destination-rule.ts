import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsDefined, IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, ValidateNested } from 'class-validator';
import { FieldIssue, KindDefinition, NETWORKING_VERSIONS } from '../kind';
import { duplicates, IsMapOf, IsMeshHost, IsStringMap } from './common';
import { IsDuration, PortSelector } from './virtual-service';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export class HTTPCookie {
  @IsString() name!: string;
  @IsOptional() @IsString() path?: string;
  @IsOptional() @IsDuration('0s') ttl?: string;
}

export class RingHash {
  @IsOptional() @IsInt() @Min(0) minimumRingSize?: number;
}

export class Maglev {
  @IsOptional() @IsInt() @Min(0) tableSize?: number;
}

/** Exactly one hash key (httpHeaderName, httpCookie, useSourceIp, httpQueryParameterName). */
export class ConsistentHashLB {
  @IsOptional() @IsString() httpHeaderName?: string;
  @IsOptional() @ValidateNested() @Type(() => HTTPCookie) httpCookie?: HTTPCookie;
  @IsOptional() @IsBoolean() useSourceIp?: boolean;
  @IsOptional() @IsString() httpQueryParameterName?: string;
  @IsOptional() @ValidateNested() @Type(() => RingHash) ringHash?: RingHash;
  @IsOptional() @ValidateNested() @Type(() => Maglev) maglev?: Maglev;
  /** Older spelling of ringHash.minimumRingSize. */
  @IsOptional() @IsInt() @Min(0) minimumRingSize?: number;
}

export class LocalityDistribute {
  @IsString() from!: string;
  /** locality → weight (percent). */
  @IsMapOf((v) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 100, 'weights from 0 to 100', { type: 'integer', minimum: 0, maximum: 100 }) to!: Record<string, number>;
}

export class LocalityFailover {
  @IsString() from!: string;
  @IsString() to!: string;
}

export class LocalityLoadBalancerSetting {
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => LocalityDistribute) distribute?: LocalityDistribute[];
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => LocalityFailover) failover?: LocalityFailover[];
  @IsOptional() @IsArray() @IsString({ each: true }) failoverPriority?: string[];
  @IsOptional() @IsBoolean() enabled?: boolean;
}

export const SIMPLE_LB = ['UNSPECIFIED', 'RANDOM', 'PASSTHROUGH', 'ROUND_ROBIN', 'LEAST_REQUEST', 'LEAST_CONN'] as const;

export class LoadBalancerSettings {
  @IsOptional() @IsIn(SIMPLE_LB) simple?: (typeof SIMPLE_LB)[number];
  @IsOptional() @ValidateNested() @Type(() => ConsistentHashLB) consistentHash?: ConsistentHashLB;
  @IsOptional() @ValidateNested() @Type(() => LocalityLoadBalancerSetting) localityLbSetting?: LocalityLoadBalancerSetting;
  @IsOptional() @IsDuration() warmupDurationSecs?: string;
}

export class TcpKeepalive {
  @IsOptional() @IsInt() @Min(0) probes?: number;
  @IsOptional() @IsDuration() time?: string;
  @IsOptional() @IsDuration() interval?: string;
}

export class TCPSettings {
  @IsOptional() @IsInt() @Min(0) maxConnections?: number;
  @IsOptional() @IsDuration() connectTimeout?: string;
  @IsOptional() @ValidateNested() @Type(() => TcpKeepalive) tcpKeepalive?: TcpKeepalive;
  @IsOptional() @IsDuration() maxConnectionDuration?: string;
  @IsOptional() @IsDuration() idleTimeout?: string;
}

export class HTTPSettings {
  @IsOptional() @IsInt() @Min(0) http1MaxPendingRequests?: number;
  @IsOptional() @IsInt() @Min(0) http2MaxRequests?: number;
  @IsOptional() @IsInt() @Min(0) maxRequestsPerConnection?: number;
  @IsOptional() @IsInt() @Min(0) maxRetries?: number;
  @IsOptional() @IsDuration() idleTimeout?: string;
  @IsOptional() @IsIn(['DEFAULT', 'DO_NOT_UPGRADE', 'UPGRADE']) h2UpgradePolicy?: string;
  @IsOptional() @IsBoolean() useClientProtocol?: boolean;
  @IsOptional() @IsInt() @Min(0) maxConcurrentStreams?: number;
}

export class ConnectionPoolSettings {
  @IsOptional() @ValidateNested() @Type(() => TCPSettings) tcp?: TCPSettings;
  @IsOptional() @ValidateNested() @Type(() => HTTPSettings) http?: HTTPSettings;
}

export class OutlierDetection {
  @IsOptional() @IsInt() @Min(0) consecutive5xxErrors?: number;
  @IsOptional() @IsInt() @Min(0) consecutiveGatewayErrors?: number;
  @IsOptional() @IsBoolean() splitExternalLocalOriginErrors?: boolean;
  @IsOptional() @IsInt() @Min(0) consecutiveLocalOriginFailures?: number;
  @IsOptional() @IsDuration() interval?: string;
  @IsOptional() @IsDuration() baseEjectionTime?: string;
  @IsOptional() @IsInt() @Min(0) @Max(100) maxEjectionPercent?: number;
  @IsOptional() @IsInt() @Min(0) @Max(100) minHealthPercent?: number;
}

/** Our name for the incumbent's ISTIO_MUTUAL is MESH_MUTUAL: the mesh's own workload certificates. */
export const CLIENT_TLS_MODES = ['DISABLE', 'SIMPLE', 'MUTUAL', 'MESH_MUTUAL'] as const;

export class ClientTLSSettings {
  @IsIn(CLIENT_TLS_MODES) mode!: (typeof CLIENT_TLS_MODES)[number];
  @IsOptional() @IsString() clientCertificate?: string;
  @IsOptional() @IsString() privateKey?: string;
  @IsOptional() @IsString() caCertificates?: string;
  @IsOptional() @IsString() credentialName?: string;
  @IsOptional() @IsArray() @IsString({ each: true }) subjectAltNames?: string[];
  @IsOptional() @IsString() sni?: string;
  @IsOptional() @IsBoolean() insecureSkipVerify?: boolean;
  @IsOptional() @IsString() caCrl?: string;
}

export class PortTrafficPolicy {
  @IsDefined({ message: 'required' }) @ValidateNested() @Type(() => PortSelector) port!: PortSelector;
  @IsOptional() @ValidateNested() @Type(() => LoadBalancerSettings) loadBalancer?: LoadBalancerSettings;
  @IsOptional() @ValidateNested() @Type(() => ConnectionPoolSettings) connectionPool?: ConnectionPoolSettings;
  @IsOptional() @ValidateNested() @Type(() => OutlierDetection) outlierDetection?: OutlierDetection;
  @IsOptional() @ValidateNested() @Type(() => ClientTLSSettings) tls?: ClientTLSSettings;
}

export class TrafficPolicy {
  @IsOptional() @ValidateNested() @Type(() => LoadBalancerSettings) loadBalancer?: LoadBalancerSettings;
  @IsOptional() @ValidateNested() @Type(() => ConnectionPoolSettings) connectionPool?: ConnectionPoolSettings;
  @IsOptional() @ValidateNested() @Type(() => OutlierDetection) outlierDetection?: OutlierDetection;
  @IsOptional() @ValidateNested() @Type(() => ClientTLSSettings) tls?: ClientTLSSettings;
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => PortTrafficPolicy) portLevelSettings?: PortTrafficPolicy[];
}

export class Subset {
  @IsString() @Matches(DNS1123_LABEL, { message: 'must be a DNS label: lower-case letters, digits and -' }) name!: string;
  @IsOptional() @IsStringMap() labels?: Record<string, string>;
  @IsOptional() @ValidateNested() @Type(() => TrafficPolicy) trafficPolicy?: TrafficPolicy;
}

export class WorkloadSelector {
  @IsStringMap() matchLabels!: Record<string, string>;
}

/** Policies for traffic to a service after routing: networking.mesh.io DestinationRule. */
export class DestinationRuleSpec {
  @IsMeshHost() host!: string;
  @IsOptional() @ValidateNested() @Type(() => TrafficPolicy) trafficPolicy?: TrafficPolicy;
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => Subset) subsets?: Subset[];
  @IsOptional() @IsArray() @IsString({ each: true }) exportTo?: string[];
  @IsOptional() @ValidateNested() @Type(() => WorkloadSelector) workloadSelector?: WorkloadSelector;
}

function checkLoadBalancer(lb: LoadBalancerSettings, at: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (lb.simple && lb.consistentHash) issues.push({ field: `${at}.consistentHash`, message: 'cannot be combined with simple' });
  const ch = lb.consistentHash;
  if (ch) {
    const keys = [ch.httpHeaderName, ch.httpCookie, ch.useSourceIp || undefined, ch.httpQueryParameterName].filter((k) => k !== undefined);
    if (keys.length !== 1) issues.push({ field: `${at}.consistentHash`, message: 'set exactly one of httpHeaderName, httpCookie, useSourceIp or httpQueryParameterName' });
    if ([ch.ringHash, ch.maglev, ch.minimumRingSize].filter((x) => x !== undefined).length > 1) {
      issues.push({ field: `${at}.consistentHash`, message: 'set only one of ringHash, maglev or minimumRingSize' });
    }
  }
  const loc = lb.localityLbSetting;
  if (loc?.distribute?.length && loc.failover?.length) {
    issues.push({ field: `${at}.localityLbSetting.failover`, message: 'cannot be combined with distribute' });
  }
  (loc?.distribute ?? []).forEach((d, i) => {
    const total = Object.values(d.to).reduce((s, w) => s + w, 0);
    if (total !== 100) issues.push({ field: `${at}.localityLbSetting.distribute[${i}].to`, message: `weights add up to ${total}, not 100` });
  });
  return issues;
}

/** Client-side TLS of DestinationRules (and anything else that originates TLS). */
export function checkClientTls(tls: ClientTLSSettings, at: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const files = (['clientCertificate', 'privateKey', 'caCertificates'] as const).filter((k) => tls[k] !== undefined && tls[k] !== '');
  if (tls.mode === 'MUTUAL' && !tls.credentialName) {
    for (const k of ['clientCertificate', 'privateKey'] as const) {
      if (!tls[k]) issues.push({ field: `${at}.${k}`, message: 'required for MUTUAL unless credentialName is set' });
    }
  }
  if (tls.credentialName && files.length) {
    issues.push({ field: `${at}.credentialName`, message: `cannot be combined with ${files.join(', ')}` });
  }
  if (tls.mode === 'MESH_MUTUAL' && (files.length || tls.credentialName)) {
    issues.push({ field: `${at}.mode`, message: 'MESH_MUTUAL uses the mesh certificates: leave clientCertificate, privateKey, caCertificates and credentialName empty' });
  }
  return issues;
}

function checkPolicyParts(p: Omit<TrafficPolicy, 'portLevelSettings'>, at: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (p.loadBalancer) issues.push(...checkLoadBalancer(p.loadBalancer, `${at}.loadBalancer`));
  if (p.connectionPool && !p.connectionPool.tcp && !p.connectionPool.http) {
    issues.push({ field: `${at}.connectionPool`, message: 'must set tcp or http' });
  }
  const od = p.outlierDetection;
  if (od?.consecutiveLocalOriginFailures !== undefined && !od.splitExternalLocalOriginErrors) {
    issues.push({ field: `${at}.outlierDetection.consecutiveLocalOriginFailures`, message: 'only applies with splitExternalLocalOriginErrors: true' });
  }
  if (p.tls) issues.push(...checkClientTls(p.tls, `${at}.tls`));
  return issues;
}

export function checkTrafficPolicy(p: TrafficPolicy, at: string): FieldIssue[] {
  const issues = checkPolicyParts(p, at);
  const ports = p.portLevelSettings ?? [];
  for (const i of duplicates(ports.map((s) => s.port.number))) {
    issues.push({ field: `${at}.portLevelSettings[${i}].port.number`, message: `port ${ports[i].port.number} already has settings` });
  }
  ports.forEach((s, i) => issues.push(...checkPolicyParts(s, `${at}.portLevelSettings[${i}]`)));
  return issues;
}

function checkDestinationRule(spec: DestinationRuleSpec): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (spec.trafficPolicy) issues.push(...checkTrafficPolicy(spec.trafficPolicy, 'spec.trafficPolicy'));
  const subsets = spec.subsets ?? [];
  for (const i of duplicates(subsets.map((s) => s.name))) issues.push({ field: `spec.subsets[${i}].name`, message: `subset "${subsets[i].name}" is defined twice` });
  subsets.forEach((s, i) => {
    if (s.trafficPolicy) issues.push(...checkTrafficPolicy(s.trafficPolicy, `spec.subsets[${i}].trafficPolicy`));
  });
  return issues;
}

export const DestinationRuleKind: KindDefinition<DestinationRuleSpec> = {
  kind: 'DestinationRule',
  group: 'networking.mesh.io',
  versions: NETWORKING_VERSIONS,
  specClass: DestinationRuleSpec,
  check: (r) => checkDestinationRule(r.spec),
};
