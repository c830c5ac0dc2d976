import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync, ValidationError } from 'class-validator';
import { FieldIssue, FieldWarning, KindDefinition } from './kind';
import { ConfigResource } from './resource';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export type ValidationResult =
  | { ok: true; resource: ConfigResource; kind: KindDefinition; warnings: FieldWarning[] }
  | { ok: false; issues: FieldIssue[]; kind?: string; namespace?: string; name?: string };

/** The registry of kinds, by `group/version` and kind name. */
export class KindRegistry {
  private readonly byKind = new Map<string, KindDefinition>();

  constructor(kinds: readonly KindDefinition[]) {
    for (const k of kinds) this.byKind.set(k.kind, k);
  }

  all(): KindDefinition[] {
    return [...this.byKind.values()];
  }

  find(apiVersion: string, kind: string): KindDefinition | undefined {
    const def = this.byKind.get(kind);
    const [group, version] = apiVersion.split('/');
    return def && def.group === group && def.versions.includes(version) ? def : undefined;
  }

  kindNamed(kind: string): KindDefinition | undefined {
    return this.byKind.get(kind);
  }
}

/**
 * Turns one parsed document into a validated resource, or every issue with it: envelope
 * (apiVersion, kind, metadata), the spec's declared shape (unknown fields are errors, as the
 * incumbent's strict decoding makes them), then the kind's own semantic checks.
 */
export function validateDocument(doc: unknown, kinds: KindRegistry): ValidationResult {
  if (!isObject(doc)) return { ok: false, issues: [{ field: '', message: 'a resource must be a mapping with apiVersion, kind, metadata and spec' }] };
  const issues: FieldIssue[] = [];
  const kindName = typeof doc.kind === 'string' ? doc.kind : undefined;
  const meta = isObject(doc.metadata) ? doc.metadata : undefined;
  const name = typeof meta?.name === 'string' ? meta.name : undefined;
  const namespace = typeof meta?.namespace === 'string' && meta.namespace !== '' ? meta.namespace : 'default';
  const fail = () => ({ ok: false as const, issues, kind: kindName, namespace, name });

  if (typeof doc.apiVersion !== 'string') issues.push({ field: 'apiVersion', message: 'required (e.g. networking.mesh.io/v1)' });
  if (!kindName) issues.push({ field: 'kind', message: 'required' });
  if (issues.length) return fail();
  const def = kinds.find(doc.apiVersion as string, kindName!);
  if (!def) {
    const known = kinds.kindNamed(kindName!);
    issues.push(
      known
        ? { field: 'apiVersion', message: `${kindName} is served as ${known.versions.map((v) => `${known.group}/${v}`).join(', ')}, not ${doc.apiVersion}` }
        : { field: 'kind', message: `unknown kind ${kindName} (known: ${kinds.all().map((k) => k.kind).join(', ')})` },
    );
    return fail();
  }

  issues.push(...checkMetadata(meta));
  for (const key of Object.keys(doc)) {
    if (!['apiVersion', 'kind', 'metadata', 'spec', 'status'].includes(key)) issues.push({ field: key, message: 'unknown field' });
  }
  const rawSpec = doc.spec ?? {};
  if (!isObject(rawSpec)) {
    issues.push({ field: 'spec', message: 'must be a mapping' });
    return fail();
  }
  const spec = plainToInstance(def.specClass, rawSpec, { enableImplicitConversion: false }) as object;
  const errors = validateSync(spec, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true });
  issues.push(...flatten(errors, 'spec'));
  if (issues.length) return fail();

  const resource: ConfigResource = {
    apiVersion: doc.apiVersion as string,
    kind: def.kind,
    metadata: {
      name: name!,
      namespace,
      labels: { ...((meta!.labels as Record<string, string>) ?? {}) },
      annotations: { ...((meta!.annotations as Record<string, string>) ?? {}) },
    },
    spec,
  };
  issues.push(...(def.check?.(resource) ?? []));
  return issues.length ? fail() : { ok: true, resource, kind: def, warnings: def.warn?.(resource) ?? [] };
}

function checkMetadata(meta: Record<string, unknown> | undefined): FieldIssue[] {
  if (!meta) return [{ field: 'metadata', message: 'required, with at least a name' }];
  const issues: FieldIssue[] = [];
  if (typeof meta.name !== 'string' || meta.name === '') issues.push({ field: 'metadata.name', message: 'required' });
  else if (meta.name.length > 253 || !DNS1123_SUBDOMAIN.test(meta.name)) {
    issues.push({ field: 'metadata.name', message: `"${meta.name}" is not a valid name: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit` });
  }
  if (meta.namespace !== undefined && (typeof meta.namespace !== 'string' || (meta.namespace !== '' && !DNS1123_LABEL.test(meta.namespace)))) {
    issues.push({ field: 'metadata.namespace', message: `"${String(meta.namespace)}" is not a valid namespace name` });
  }
  for (const mapField of ['labels', 'annotations']) {
    const m = meta[mapField];
    if (m === undefined) continue;
    if (!isObject(m) || Object.values(m).some((v) => typeof v !== 'string')) {
      issues.push({ field: `metadata.${mapField}`, message: 'must map strings to strings' });
    }
  }
  return issues;
}

/** class-validator's error tree as field paths: `spec.http[0].route[1].weight: ...`. */
function flatten(errors: ValidationError[], parent: string): FieldIssue[] {
  const out: FieldIssue[] = [];
  for (const e of errors) {
    const path = /^\d+$/.test(e.property) ? `${parent}[${e.property}]` : `${parent}.${e.property}`;
    for (const message of Object.values(e.constraints ?? {})) out.push({ field: path, message: tidy(message, e.property) });
    out.push(...flatten(e.children ?? [], path));
  }
  return out;
}

/** class-validator messages start with the property name, which the path already shows. */
function tidy(message: string, property: string): string {
  if (message === `property ${property} should not exist`) return 'unknown field';
  return message.startsWith(`${property} `) ? message.slice(property.length + 1) : message;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
