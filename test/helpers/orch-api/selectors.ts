import {
  FieldRequirement,
  LabelRequirement,
  parseFieldSelector,
  parseLabelSelector,
  POD_SELECTABLE_FIELDS,
  SelectorError,
} from '../../../src/modules/cni/repair/selectors';
import { badRequest } from './errors';
import type { ResourceType } from './resources';

/*
 * Label and field selection for list, watch and deletecollection, with the API server's
 * grammar (the parsers are the mesh's own) and its per-kind sets of selectable fields.
 */

export interface Selection {
  readonly labels: readonly LabelRequirement[];
  readonly fields: readonly FieldRequirement[];
}

const ALWAYS = ['metadata.name', 'metadata.namespace'];
const BY_KIND: Record<string, readonly string[]> = {
  '/pods': POD_SELECTABLE_FIELDS,
  '/secrets': ['type'],
  '/namespaces': ['status.phase'],
  '/nodes': ['spec.unschedulable'],
  '/services': ['spec.clusterIP', 'spec.type'],
  '/events': ['involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid', 'involvedObject.apiVersion', 'involvedObject.resourceVersion', 'involvedObject.fieldPath', 'reason', 'reportingComponent', 'source', 'type'],
  'apps/replicasets': ['status.replicas'],
  'batch/jobs': ['status.successful'],
};

export function parseSelection(type: ResourceType, labelSelector = '', fieldSelector = ''): Selection {
  try {
    const labels = parseLabelSelector(labelSelector);
    const fields = parseFieldSelector(fieldSelector);
    const allowed = BY_KIND[`${type.group}/${type.plural}`] ?? [];
    for (const f of fields) {
      if (!ALWAYS.includes(f.field) && !allowed.includes(f.field)) throw new SelectorError(`field label not supported: ${f.field}`);
    }
    return { labels, fields };
  } catch (err) {
    if (err instanceof SelectorError) throw badRequest(`unable to parse requirement: ${err.message}`);
    throw err;
  }
}

export function selectsAll(s: Selection): boolean {
  return s.labels.length === 0 && s.fields.length === 0;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function selects(s: Selection, obj: any): boolean {
  if (s.labels.length > 0) {
    const labels: Record<string, string> = obj.metadata?.labels ?? {};
    if (!s.labels.every((r) => labelMatches(labels, r))) return false;
  }
  return s.fields.every((r) => (fieldValue(obj, r.field) === r.value) === (r.operator !== '!='));
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function fieldValue(obj: any, field: string): string {
  if (field === 'status.podIPs') return obj.status?.podIPs?.[0]?.ip ?? '';
  if (field === 'source') return obj.source?.component ?? '';
  let value = obj;
  for (const part of field.split('.')) value = value?.[part];
  if (value === undefined || value === null) return field === 'spec.hostNetwork' || field === 'spec.unschedulable' ? 'false' : '';
  return String(value);
}

export function labelMatches(labels: Record<string, string>, r: LabelRequirement): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = labels[r.key];
  switch (r.operator) {
    case '=':
    case 'in':
      return has && r.values.includes(value);
    case '!=':
    case 'notin':
      return !has || !r.values.includes(value);
    case 'exists':
      return has;
    case '!':
      return !has;
    case '>':
    case '<':
      if (!has || !/^-?\d+$/.test(value)) return false;
      return r.operator === '>' ? Number(value) > Number(r.values[0]) : Number(value) < Number(r.values[0]);
  }
}

/** A metav1.LabelSelector (matchLabels, matchExpressions) as webhooks and controllers use it; undefined/{} selects everything. */
export function labelSelectorMatches(selector: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] } | undefined, labels: Record<string, string>): boolean {
  if (!selector) return true;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (!has || !values.includes(labels[e.key])) return false;
        break;
      case 'NotIn':
        if (has && values.includes(labels[e.key])) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}
