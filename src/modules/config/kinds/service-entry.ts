import { Type } from 'class-transformer';
import { ArrayNotEmpty, IsArray, IsIn, IsOptional, IsString, ValidateNested } from 'class-validator';
import { isIP } from 'node:net';
import { FieldIssue, KindDefinition, NETWORKING_VERSIONS } from '../kind';
import { duplicates, IsIPOrCIDR, IsMeshHost, IsPortNumber, IsStringMap } from './common';
import { checkWorkloadEntry, WorkloadEntrySpec } from './workload-entry';

export const PROTOCOLS = ['HTTP', 'HTTPS', 'GRPC', 'GRPC-WEB', 'HTTP2', 'MONGO', 'MYSQL', 'REDIS', 'TCP', 'TLS', 'UDP'] as const;

export class ServicePort {
  @IsPortNumber() number!: number;
  /** HTTP|HTTPS|GRPC|HTTP2|MONGO|MYSQL|REDIS|TCP|TLS|UDP (case-insensitive; unset = sniffed, treated as TCP). */
  @IsOptional() @IsString() protocol?: string;
  @IsString() name!: string;
  @IsOptional() @IsPortNumber() targetPort?: number;
}

export class WorkloadSelectorLabels {
  @IsStringMap() labels!: Record<string, string>;
}

/** A service known to the mesh, inside or outside it: networking.mesh.io ServiceEntry. */
export class ServiceEntrySpec {
  @IsArray() @ArrayNotEmpty() @IsMeshHost({ each: true }) hosts!: string[];
  @IsOptional() @IsArray() @IsIPOrCIDR({ each: true }) addresses?: string[];
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => ServicePort) ports?: ServicePort[];
  @IsOptional() @IsIn(['MESH_EXTERNAL', 'MESH_INTERNAL']) location?: 'MESH_EXTERNAL' | 'MESH_INTERNAL';
  @IsOptional() @IsIn(['NONE', 'STATIC', 'DNS', 'DNS_ROUND_ROBIN']) resolution?: 'NONE' | 'STATIC' | 'DNS' | 'DNS_ROUND_ROBIN';
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => WorkloadEntrySpec) endpoints?: WorkloadEntrySpec[];
  @IsOptional() @ValidateNested() @Type(() => WorkloadSelectorLabels) workloadSelector?: WorkloadSelectorLabels;
  @IsOptional() @IsArray() @IsString({ each: true }) exportTo?: string[];
  @IsOptional() @IsArray() @IsString({ each: true }) subjectAltNames?: string[];
}

function checkServiceEntry(spec: ServiceEntrySpec): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const ports = spec.ports ?? [];
  const resolution = spec.resolution ?? 'NONE';
  for (const i of duplicates(ports.map((p) => p.number))) issues.push({ field: `spec.ports[${i}].number`, message: `port ${ports[i].number} is declared twice` });
  for (const i of duplicates(ports.map((p) => p.name))) issues.push({ field: `spec.ports[${i}].name`, message: `port name "${ports[i].name}" is used twice` });
  ports.forEach((p, i) => {
    if (p.protocol && !(PROTOCOLS as readonly string[]).includes(p.protocol.toUpperCase())) {
      issues.push({ field: `spec.ports[${i}].protocol`, message: `unknown protocol "${p.protocol}" (one of ${PROTOCOLS.join(', ')})` });
    }
  });
  for (const i of duplicates(spec.hosts)) issues.push({ field: `spec.hosts[${i}]`, message: `host "${spec.hosts[i]}" is listed twice` });
  if (spec.endpoints && spec.workloadSelector) {
    issues.push({ field: 'spec.workloadSelector', message: 'cannot be used together with endpoints' });
  }
  const portNames = new Set(ports.map((p) => p.name));
  (spec.endpoints ?? []).forEach((ep, i) => {
    issues.push(...checkWorkloadEntry(ep, `spec.endpoints[${i}]`, true));
    for (const name of Object.keys(ep.ports ?? {})) {
      if (!portNames.has(name)) issues.push({ field: `spec.endpoints[${i}].ports.${name}`, message: `no service port is named "${name}"` });
    }
    const address = ep.address ?? '';
    if (resolution === 'STATIC' && address !== '' && !address.startsWith('unix://') && !isIP(address)) {
      issues.push({ field: `spec.endpoints[${i}].address`, message: `resolution STATIC needs IP addresses, not "${address}"` });
    }
  });
  if (resolution === 'DNS' || resolution === 'DNS_ROUND_ROBIN') {
    spec.hosts.forEach((h, i) => {
      if (h.startsWith('*') && !(spec.endpoints?.length)) {
        issues.push({ field: `spec.hosts[${i}]`, message: `resolution ${resolution} cannot resolve the wildcard host "${h}" without endpoints` });
      }
    });
  }
  if (resolution === 'NONE' && spec.endpoints?.length) {
    issues.push({ field: 'spec.resolution', message: 'NONE takes no endpoints; use STATIC or DNS' });
  }
  return issues;
}

export const ServiceEntryKind: KindDefinition<ServiceEntrySpec> = {
  kind: 'ServiceEntry',
  group: 'networking.mesh.io',
  versions: NETWORKING_VERSIONS,
  specClass: ServiceEntrySpec,
  check: (r) => checkServiceEntry(r.spec),
};
