import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { FieldIssue, KindDefinition, NETWORKING_VERSIONS } from '../kind';
import { IsMapOf, IsStringMap } from './common';
import { isIP } from 'node:net';

/** A workload outside the orchestrator (VM, bare metal, a process here): networking.mesh.io WorkloadEntry. */
export class WorkloadEntrySpec {
  /** IP address, DNS name, or `unix://` socket path; may be empty when `network` says it is reached through a gateway. */
  @IsOptional() @IsString() address?: string;
  /** Service port name → port on this workload. */
  @IsOptional() @IsMapOf((v) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65535, 'port numbers from 1 to 65535', { type: 'integer', minimum: 1, maximum: 65535 })
  ports?: Record<string, number>;
  @IsOptional() @IsStringMap() labels?: Record<string, string>;
  @IsOptional() @IsString() network?: string;
  /** region/zone/subzone */
  @IsOptional() @IsString() locality?: string;
  @IsOptional() @IsInt() @Min(0) @Max(4294967295) weight?: number;
  @IsOptional() @IsString() serviceAccount?: string;
}

/** Checks shared by WorkloadEntry and ServiceEntry endpoints. */
export function checkWorkloadEntry(spec: WorkloadEntrySpec, at: string, requireAddress: boolean): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const address = spec.address ?? '';
  if (address === '' && requireAddress && !spec.network) issues.push({ field: `${at}.address`, message: 'required unless network is set' });
  if (address.startsWith('unix://') && spec.ports && Object.keys(spec.ports).length > 0) {
    issues.push({ field: `${at}.ports`, message: 'a unix:// address takes no ports' });
  }
  if (address !== '' && !address.startsWith('unix://') && !isIP(address) && !/^[a-zA-Z0-9.-]+$/.test(address)) {
    issues.push({ field: `${at}.address`, message: `"${address}" is neither an IP address, a DNS name nor unix://<path>` });
  }
  if (spec.locality !== undefined && spec.locality.split('/').length > 3) {
    issues.push({ field: `${at}.locality`, message: 'must be region[/zone[/subzone]]' });
  }
  return issues;
}

export const WorkloadEntryKind: KindDefinition<WorkloadEntrySpec> = {
  kind: 'WorkloadEntry',
  group: 'networking.mesh.io',
  versions: NETWORKING_VERSIONS,
  specClass: WorkloadEntrySpec,
  check: (r) => checkWorkloadEntry(r.spec, 'spec', true),
};
