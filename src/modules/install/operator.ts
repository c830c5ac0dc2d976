/*
 * The operator resource: what an install is made of. `apiVersion: install.mesh.io/v1alpha1,
 * kind: MeshOperator` (our name for the incumbent's operator resource), its `spec` holding the
 * profile, image hub/tag, revision, system namespace, component switches, mesh config and free
 * chart values. A profile (manifests/profiles/<name>.yaml) is the base; the `-f` files overlay
 * it left to right, then each `--set`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseDocument } from 'yaml';
import { UserError } from '../shared/user-error';
import { yamlDocumentValue } from '../shared/yaml-value';

export const OPERATOR_API_VERSION = 'install.mesh.io/v1alpha1';
export const OPERATOR_KIND = 'MeshOperator';
export const PROFILES = ['default', 'demo', 'minimal', 'remote', 'empty'] as const;

/** A file larger than this is refused before parsing (an operator resource is a few KiB). */
const MAX_FILE_BYTES = 1024 * 1024;

export type Tree = Record<string, unknown>;

/** What the spec may hold: each known field's type; `map` is free-form (mesh config, values, resources). */
type FieldType = 'string' | 'bool' | 'int' | 'map' | { [field: string]: FieldType };
const COMPONENT: FieldType = { enabled: 'bool', namespace: 'string', k8s: { replicaCount: 'int', resources: 'map', env: 'map' } };
const SPEC: FieldType = {
  profile: 'string',
  hub: 'string',
  tag: 'string',
  revision: 'string',
  namespace: 'string',
  components: { base: { enabled: 'bool' }, pilot: COMPONENT, cni: COMPONENT },
  meshConfig: 'map',
  values: 'map',
};

export interface OperatorSpec {
  profile: string;
  hub: string;
  tag: string;
  revision: string;
  namespace: string;
  components: {
    base: { enabled: boolean };
    pilot: { enabled: boolean; k8s: { replicaCount: number; resources?: Tree; env?: Record<string, string> } };
    cni: { enabled: boolean; namespace?: string; k8s?: { resources?: Tree } };
  };
  meshConfig: Tree;
  values: Tree;
}

export interface OperatorInputs {
  /** `-f` files, overlaid left to right. */
  files?: string[];
  /** `--set` entries, applied after the files. */
  sets?: string[];
  /** `--revision`: wins over the files and sets. */
  revision?: string;
  /** `--manifests`: where profiles/ and crds/ are. */
  manifestsDir: string;
  /** `--force`: report validation problems as warnings instead of stopping. */
  force?: boolean;
}

export interface ResolvedOperator {
  spec: OperatorSpec;
  /** Validation problems that `--force` let through. */
  warnings: string[];
}

/** The repository's manifests/ (profiles and CRDs), the default of `--manifests`. */
export function defaultManifestsDir(): string {
  // Compiled into dist/src/modules/install: the repository is four levels up.
  return path.resolve(__dirname, '..', '..', '..', '..', 'manifests');
}

export const isTree = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `over` laid onto `base`: mappings merge key by key, anything else (lists too) replaces. */
export function overlay(base: Tree, over: Tree): Tree {
  const out: Tree = { ...base };
  for (const [key, value] of Object.entries(over)) out[key] = isTree(value) && isTree(out[key]) ? overlay(out[key] as Tree, value) : value;
  return out;
}

/** Reads one operator resource file, returning its `spec` (checked to be an operator resource). */
export function readOperatorFile(file: string): Tree {
  let text: string;
  try {
    const size = fs.statSync(file).size;
    if (size > MAX_FILE_BYTES) throw new UserError(`${file}: ${size} bytes is too large for an operator resource (limit ${MAX_FILE_BYTES})`);
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(`cannot read ${file}: ${(err as Error).message}`);
  }
  return operatorSpecOf(text, file);
}

function operatorSpecOf(text: string, where: string): Tree {
  const doc = parseDocument(text, { uniqueKeys: true });
  const body = yamlDocumentValue(doc, where, 'not valid YAML: ');
  if (body === null || body === undefined) return {};
  if (!isTree(body)) throw new UserError(`${where}: must be a ${OPERATOR_KIND} resource (a mapping)`);
  if (body.apiVersion !== undefined && body.apiVersion !== OPERATOR_API_VERSION) {
    throw new UserError(`${where}: apiVersion ${JSON.stringify(body.apiVersion)} is not ${OPERATOR_API_VERSION}`);
  }
  if (body.kind !== undefined && body.kind !== OPERATOR_KIND) throw new UserError(`${where}: kind ${JSON.stringify(body.kind)} is not ${OPERATOR_KIND}`);
  for (const key of Object.keys(body)) {
    if (!['apiVersion', 'kind', 'metadata', 'spec'].includes(key)) throw new UserError(`${where}: unknown field ${JSON.stringify(key)} (expected apiVersion, kind, metadata, spec)`);
  }
  if (body.spec === undefined || body.spec === null) return {};
  if (!isTree(body.spec)) throw new UserError(`${where}: spec must be a mapping`);
  return body.spec;
}

/** `a.b\.c.d` → ['a', 'b.c', 'd']. */
export function splitSetPath(key: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < key.length; i++) {
    if (key[i] === '\\' && key[i + 1] === '.') {
      current += '.';
      i++;
    } else if (key[i] === '.') {
      parts.push(current);
      current = '';
    } else current += key[i];
  }
  parts.push(current);
  if (parts.some((p) => p === '')) throw new UserError(`--set ${JSON.stringify(key)}: empty path segment`);
  return parts;
}

/** A `--set` value as typed: true/false, integers and decimals as numbers, the rest a string. */
function setValue(raw: string): unknown {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (/^-?\d+(\.\d+)?$/.test(raw) && raw.length < 16) return Number(raw);
  return raw;
}

/** The schema's type of the field at `parts` (under spec), when it is a known one. */
function fieldTypeAt(parts: string[]): FieldType | undefined {
  let type: FieldType | undefined = SPEC;
  for (const part of parts) type = typeof type === 'object' ? type[part] : undefined;
  return type;
}

/**
 * One `--set key=value` as a tree to overlay; `spec.` in front is optional. A value is typed
 * as it reads (true, 3) unless the field is a known string (`tag=1.20` stays "1.20").
 */
export function setEntryTree(entry: string): Tree {
  const eq = entry.indexOf('=');
  if (eq <= 0) throw new UserError(`--set ${JSON.stringify(entry)}: expected <path>=<value>`);
  const parts = splitSetPath(entry.slice(0, eq));
  if (parts[0] === 'spec' && parts.length > 1) parts.shift();
  const raw = entry.slice(eq + 1);
  let tree: unknown = fieldTypeAt(parts) === 'string' ? raw : setValue(raw);
  for (const part of [...parts].reverse()) tree = { [part]: tree };
  return tree as Tree;
}

/** Problems of `spec` against the schema, each naming where (`<source>: spec.components.pilot.enabled: ...`). */
export function validateSpec(spec: Tree, where: (field: string) => string): string[] {
  const problems: string[] = [];
  const walk = (value: unknown, type: FieldType, at: string) => {
    if (value === undefined || value === null) return;
    if (typeof type === 'object') {
      if (!isTree(value)) return void problems.push(`${where(at)}: ${at} must be a mapping, not ${describe(value)}`);
      for (const [key, v] of Object.entries(value)) {
        const field = `${at}.${key}`;
        if (!(key in type)) problems.push(`${where(field)}: unknown field ${field} (known: ${Object.keys(type).join(', ')})`);
        else walk(v, type[key], field);
      }
      return;
    }
    const ok = type === 'string' ? typeof value === 'string' : type === 'bool' ? typeof value === 'boolean' : type === 'int' ? Number.isInteger(value) : isTree(value);
    if (!ok) problems.push(`${where(at)}: ${at} must be ${type === 'map' ? 'a mapping' : type === 'int' ? 'an integer' : `a ${type === 'bool' ? 'boolean' : 'string'}`}, not ${describe(value)}`);
  };
  walk(spec, SPEC, 'spec');
  return problems;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (isTree(value)) return 'a mapping';
  return `${typeof value} ${JSON.stringify(value)}`;
}

/** Reads a built-in (or `--manifests`) profile. */
export function readProfile(name: string, manifestsDir: string): Tree {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(name)) throw new UserError(`profile ${JSON.stringify(name)} is not a profile name (built in: ${PROFILES.join(', ')})`);
  const file = path.join(manifestsDir, 'profiles', `${name}.yaml`);
  if (!fs.existsSync(file)) throw new UserError(`profile ${JSON.stringify(name)} not found: no ${file} (built in: ${PROFILES.join(', ')})`);
  return readOperatorFile(file);
}

/**
 * The operator spec an install uses: the profile the files and sets name (default `default`),
 * the files overlaid left to right, then the sets, then `--revision`. Validation problems
 * (unknown fields, wrong types) stop it, each naming the file or `--set` and the field, unless
 * `force`.
 */
export function resolveOperator(inputs: OperatorInputs): ResolvedOperator {
  const layers: { source: string; tree: Tree }[] = [];
  for (const file of inputs.files ?? []) layers.push({ source: file, tree: readOperatorFile(file) });
  for (const entry of inputs.sets ?? []) layers.push({ source: `--set ${entry}`, tree: setEntryTree(entry) });
  const user = layers.reduce<Tree>((acc, l) => overlay(acc, l.tree), {});
  const problems = layers.flatMap((l) => validateSpec(l.tree, () => l.source));
  if (problems.length > 0 && !inputs.force) {
    throw new UserError(`the operator resource is not valid (--force proceeds anyway): ${problems.join('; ')}`);
  }
  const profileName = typeof user.profile === 'string' && user.profile !== '' ? user.profile : 'default';
  let merged = overlay(readProfile(profileName, inputs.manifestsDir), user);
  if (inputs.revision !== undefined && inputs.revision !== '') merged = overlay(merged, { revision: inputs.revision });
  merged.profile = profileName;
  return { spec: normalise(merged), warnings: problems };
}

const str = (v: unknown, fallback: string) => (typeof v === 'string' ? v : fallback);
const bool = (v: unknown) => v === true;
const tree = (v: unknown): Tree => (isTree(v) ? v : {});

/** Fills what the profile left out, and checks what the renderer relies on. */
function normalise(spec: Tree): OperatorSpec {
  const components = tree(spec.components);
  const pilot = tree(components.pilot);
  const pilotK8s = tree(pilot.k8s);
  const cni = tree(components.cni);
  const revision = str(spec.revision, '');
  if (revision !== '' && !/^[a-z0-9]([a-z0-9-]{0,48}[a-z0-9])?$/.test(revision)) {
    throw new UserError(`revision ${JSON.stringify(revision)} is not valid: lowercase letters, digits and '-', at most 50, starting and ending with a letter or digit`);
  }
  const namespace = str(spec.namespace, 'mesh-system');
  if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(namespace)) throw new UserError(`namespace ${JSON.stringify(namespace)} is not a valid namespace name`);
  const replicas = Number.isInteger(pilotK8s.replicaCount) ? (pilotK8s.replicaCount as number) : 1;
  if (replicas < 0 || replicas > 100) throw new UserError(`spec.components.pilot.k8s.replicaCount ${replicas} is out of range (0-100)`);
  return {
    profile: str(spec.profile, 'default'),
    hub: str(spec.hub, 'docker.io/meshproject'),
    tag: str(spec.tag, 'latest'),
    revision,
    namespace,
    components: {
      base: { enabled: bool(tree(components.base).enabled) },
      pilot: {
        enabled: bool(pilot.enabled),
        k8s: {
          replicaCount: replicas,
          ...(isTree(pilotK8s.resources) ? { resources: pilotK8s.resources } : {}),
          ...(isTree(pilotK8s.env) ? { env: Object.fromEntries(Object.entries(pilotK8s.env).map(([k, v]) => [k, String(v)])) } : {}),
        },
      },
      cni: {
        enabled: bool(cni.enabled),
        ...(typeof cni.namespace === 'string' ? { namespace: cni.namespace } : {}),
        ...(isTree(tree(cni.k8s).resources) ? { k8s: { resources: tree(cni.k8s).resources as Tree } } : {}),
      },
    },
    meshConfig: tree(spec.meshConfig),
    values: tree(spec.values),
  };
}
