import { parseGoBool } from './probes';
import { InjectionConfigError } from './proxy-config';

/**
 * Validation of the pod annotations that steer injection (`sidecar.mesh.io/*`,
 * `traffic.sidecar.mesh.io/*`, `proxy.mesh.io/config`): a bad value fails the injection with
 * a message naming the annotation, as the incumbent's does.
 */

export const PROXY_CONFIG_ANNOTATION = 'proxy.mesh.io/config';

export class AnnotationError extends InjectionConfigError {}

/** Go's netip.ParsePrefix, enough to tell a CIDR from anything else. */
function isCIDR(text: string): boolean {
  const m = /^(.+)\/(\d{1,3})$/.exec(text);
  if (!m) return false;
  const [, addr, bits] = m;
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(addr)) {
    return addr.split('.').every((o) => Number(o) <= 255 && !/^0\d/.test(o)) && Number(bits) <= 32;
  }
  if (addr.includes(':') && /^[0-9a-fA-F:.]+$/.test(addr) && (addr.match(/::/g) ?? []).length <= 1) return Number(bits) <= 128;
  return false;
}

function cidrList(name: string, value: string): string | undefined {
  if (value.length === 0) return undefined;
  for (const cidr of value.split(',')) if (!isCIDR(cidr)) return `${name} invalid: failed parsing cidr '${cidr}'`;
  return undefined;
}

function port(text: string): number | undefined {
  const t = text.trim();
  return /^\d+$/.test(t) && Number(t) <= 65535 ? Number(t) : undefined;
}

function portList(name: string, value: string): string | undefined {
  const trimmed = value.trim();
  if (trimmed.length === 0) return undefined;
  for (const p of trimmed.split(',')) if (port(p) === undefined) return `${name} invalid: failed parsing port '${p}'`;
  return undefined;
}

const uint32 = (v: string) => (/^\d+$/.test(v) && Number(v) <= 0xffffffff ? undefined : `strconv.ParseUint: parsing ${JSON.stringify(v)}: invalid syntax`);

const VALIDATORS: Record<string, (v: string) => string | undefined> = {
  'sidecar.mesh.io/interceptionMode': (v) => (['REDIRECT', 'TPROXY', 'NONE'].includes(v) ? undefined : `interceptionMode invalid, use REDIRECT,TPROXY,NONE: ${v}`),
  'status.sidecar.mesh.io/port': (v) => (port(v) === undefined ? `excludeInboundPorts invalid: failed parsing port '${v}'` : undefined),
  'readiness.status.sidecar.mesh.io/initialDelaySeconds': uint32,
  'readiness.status.sidecar.mesh.io/periodSeconds': uint32,
  'readiness.status.sidecar.mesh.io/failureThreshold': uint32,
  'traffic.sidecar.mesh.io/includeOutboundIPRanges': (v) => (v === '*' ? undefined : cidrList('includeIPRanges', v)),
  'traffic.sidecar.mesh.io/excludeOutboundIPRanges': (v) => cidrList('excludeIPRanges', v),
  'traffic.sidecar.mesh.io/includeInboundPorts': (v) => (v === '*' ? undefined : portList('includeInboundPorts', v)),
  'traffic.sidecar.mesh.io/excludeInboundPorts': (v) => portList('excludeInboundPorts', v),
  'traffic.sidecar.mesh.io/excludeOutboundPorts': (v) => portList('excludeOutboundPorts', v),
  'prometheus.mesh.io/merge-metrics': (v) => (parseGoBool(v) === undefined ? `strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax` : undefined),
};

/** What is wrong with one annotation's value, or undefined when it is valid or not one the injector reads. */
export function annotationValueProblem(name: string, value: string): string | undefined {
  return VALIDATORS[name]?.(value);
}

/** Throws AnnotationError listing every invalid annotation. */
export function validateAnnotations(annotations: Readonly<Record<string, string>> | undefined): void {
  const problems: string[] = [];
  for (const name of Object.keys(annotations ?? {}).sort()) {
    const value = annotations![name];
    const why = annotationValueProblem(name, String(value));
    if (why) problems.push(`invalid value '${value}' for annotation '${name}': ${why}`);
  }
  if (problems.length > 0) throw new AnnotationError(problems.join('; '));
}
