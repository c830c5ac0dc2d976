import { Type } from 'class-transformer';
import { IsIn, IsObject, IsOptional, ValidateNested } from 'class-validator';
import { FieldIssue, KindDefinition, SECURITY_VERSIONS } from '../kind';
import { checkSelector, WorkloadSelector } from './request-authentication';

/** UNSET inherits from the parent scope (namespace, then mesh); the mesh default is PERMISSIVE. */
export const MTLS_MODES = ['UNSET', 'DISABLE', 'PERMISSIVE', 'STRICT'] as const;
export type MtlsMode = (typeof MTLS_MODES)[number];

export class PeerMtls {
  @IsOptional() @IsIn(MTLS_MODES) mode?: MtlsMode;
}

/** Whether the selected workloads accept plain text, mutual TLS, or both: security.mesh.io PeerAuthentication. */
export class PeerAuthenticationSpec {
  @IsOptional() @ValidateNested() @Type(() => WorkloadSelector) selector?: WorkloadSelector;
  @IsOptional() @ValidateNested() @Type(() => PeerMtls) mtls?: PeerMtls;
  /**
   * Workload port number → mTLS for that port. A map is not something class-transformer can
   * type, so its entries are checked in `check`, with their own field paths.
   */
  @IsOptional() @IsObject() portLevelMtls?: Record<string, PeerMtls>;
}

function checkPeerAuthentication(spec: PeerAuthenticationSpec): FieldIssue[] {
  const issues = checkSelector(spec.selector);
  const ports = spec.portLevelMtls;
  if (ports === undefined) return issues;
  const entries = Object.entries(ports);
  if (entries.length === 0) issues.push({ field: 'spec.portLevelMtls', message: 'must have at least one port when set' });
  // Ports are the workload's own, so only a policy that picks workloads can name them.
  if (entries.length > 0 && Object.keys(spec.selector?.matchLabels ?? {}).length === 0) {
    issues.push({ field: 'spec.portLevelMtls', message: 'needs a selector with matchLabels: mesh- and namespace-wide policies cannot set per-port mTLS' });
  }
  for (const [port, value] of entries) {
    const at = `spec.portLevelMtls.${port}`;
    if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) issues.push({ field: at, message: `"${port}" is not a port number from 1 to 65535` });
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      issues.push({ field: at, message: 'must be a mapping such as {mode: STRICT}' });
      continue;
    }
    for (const key of Object.keys(value)) if (key !== 'mode') issues.push({ field: `${at}.${key}`, message: 'unknown field' });
    const mode: unknown = value.mode;
    if (mode !== undefined && !(MTLS_MODES as readonly unknown[]).includes(mode)) {
      issues.push({ field: `${at}.mode`, message: `must be one of ${MTLS_MODES.join(', ')}` });
    }
  }
  return issues;
}

export const PeerAuthenticationKind: KindDefinition<PeerAuthenticationSpec> = {
  kind: 'PeerAuthentication',
  group: 'security.mesh.io',
  versions: SECURITY_VERSIONS,
  specClass: PeerAuthenticationSpec,
  check: (r) => checkPeerAuthentication(r.spec),
};
