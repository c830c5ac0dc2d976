import { Type } from 'class-transformer';
import { ArrayNotEmpty, IsArray, IsDefined, IsIn, IsInt, IsOptional, IsString, Min, ValidateNested } from 'class-validator';
import { FieldIssue, KindDefinition, NETWORKING_VERSIONS } from '../kind';
import { IsPortNumber, IsStringMap } from './common';
import { checkWorkloadEntry, WorkloadEntrySpec } from './workload-entry';

export class GroupMetadata {
  @IsOptional() @IsStringMap() labels?: Record<string, string>;
  @IsOptional() @IsStringMap() annotations?: Record<string, string>;
}

export class HTTPHeader {
  @IsString() name!: string;
  @IsString() value!: string;
}

export class HTTPGetAction {
  @IsOptional() @IsString() path?: string;
  @IsPortNumber() port!: number;
  @IsOptional() @IsString() host?: string;
  @IsOptional() @IsIn(['HTTP', 'HTTPS']) scheme?: 'HTTP' | 'HTTPS';
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => HTTPHeader) httpHeaders?: HTTPHeader[];
}

export class TCPSocketAction {
  @IsOptional() @IsString() host?: string;
  @IsPortNumber() port!: number;
}

export class GrpcAction {
  @IsPortNumber() port!: number;
  @IsOptional() @IsString() service?: string;
}

export class ExecAction {
  @IsArray() @ArrayNotEmpty() @IsString({ each: true }) command!: string[];
}

/** Readiness probe the agent runs on the workload; exactly one of httpGet, tcpSocket, grpc, exec. */
export class ReadinessProbe {
  @IsOptional() @IsInt() @Min(0) initialDelaySeconds?: number;
  @IsOptional() @IsInt() @Min(0) timeoutSeconds?: number;
  @IsOptional() @IsInt() @Min(0) periodSeconds?: number;
  @IsOptional() @IsInt() @Min(0) successThreshold?: number;
  @IsOptional() @IsInt() @Min(0) failureThreshold?: number;
  @IsOptional() @ValidateNested() @Type(() => HTTPGetAction) httpGet?: HTTPGetAction;
  @IsOptional() @ValidateNested() @Type(() => TCPSocketAction) tcpSocket?: TCPSocketAction;
  @IsOptional() @ValidateNested() @Type(() => GrpcAction) grpc?: GrpcAction;
  @IsOptional() @ValidateNested() @Type(() => ExecAction) exec?: ExecAction;
}

/** A template for WorkloadEntries that workloads register themselves from: networking.mesh.io WorkloadGroup. */
export class WorkloadGroupSpec {
  @IsOptional() @ValidateNested() @Type(() => GroupMetadata) metadata?: GroupMetadata;
  @IsDefined({ message: 'required' }) @ValidateNested() @Type(() => WorkloadEntrySpec) template!: WorkloadEntrySpec;
  @IsOptional() @ValidateNested() @Type(() => ReadinessProbe) probe?: ReadinessProbe;
}

function checkWorkloadGroup(spec: WorkloadGroupSpec): FieldIssue[] {
  // Each registering workload supplies its own address.
  const issues: FieldIssue[] = [];
  if (spec.template.address) issues.push({ field: 'spec.template.address', message: 'must be empty: each workload registers with its own address' });
  else issues.push(...checkWorkloadEntry(spec.template, 'spec.template', false));
  const p = spec.probe;
  if (p && [p.httpGet, p.tcpSocket, p.grpc, p.exec].filter((x) => x !== undefined).length !== 1) {
    issues.push({ field: 'spec.probe', message: 'set exactly one of httpGet, tcpSocket, grpc or exec' });
  }
  return issues;
}

export const WorkloadGroupKind: KindDefinition<WorkloadGroupSpec> = {
  kind: 'WorkloadGroup',
  group: 'networking.mesh.io',
  versions: NETWORKING_VERSIONS,
  specClass: WorkloadGroupSpec,
  check: (r) => checkWorkloadGroup(r.spec),
};
