import * as fs from 'node:fs';
import { parse } from 'yaml';
import { UserError } from '../shared/user-error';
import { DEFAULT_MESH_CONFIG, MeshConfigValues, PATH_NORMALIZATION_MODES, PathNormalizationMode } from './values';

/** A mesh config file that cannot be used; the message names the file and the field. */
export class MeshConfigError extends UserError {}

/**
 * Reads the `--meshConfig` file. A missing file means the defaults (the flag's default path
 * usually does not exist); anything else that cannot be read or used stops start-up.
 */
export function readMeshConfigFile(file: string): MeshConfigValues {
  const where = `--meshConfig ${file}`;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return DEFAULT_MESH_CONFIG;
    throw new MeshConfigError(`${where}: cannot read the file: ${code ?? (err as Error).message}`);
  }
  return parseMeshConfig(text, where);
}

/**
 * The fields the mesh acts on, from YAML (or JSON) text; `where` starts each error message.
 * Absent or null fields keep their defaults; fields not known yet are ignored.
 */
export function parseMeshConfig(text: string, where: string): MeshConfigValues {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new MeshConfigError(`${where}: not valid YAML: ${String((err as Error).message).split('\n')[0]}`);
  }
  if (doc === null || doc === undefined) return DEFAULT_MESH_CONFIG;
  if (!isMapping(doc)) throw new MeshConfigError(`${where}: must be a mapping of mesh config fields`);
  const fail = (field: string, why: string): never => {
    throw new MeshConfigError(`${where}: ${field}: ${why}`);
  };
  const d = DEFAULT_MESH_CONFIG;
  return {
    trustDomain: trustDomainOf(doc.trustDomain, 'trustDomain', fail) ?? d.trustDomain,
    trustDomainAliases: aliasesOf(doc.trustDomainAliases, fail) ?? d.trustDomainAliases,
    rootNamespace: nonEmptyString(doc.rootNamespace, 'rootNamespace', fail) ?? d.rootNamespace,
    enableAutoMtls: booleanOf(doc.enableAutoMtls, 'enableAutoMtls', fail) ?? d.enableAutoMtls,
    pathNormalization: normalizationOf(doc.pathNormalization, fail) ?? d.pathNormalization,
  };
}

type Fail = (field: string, why: string) => never;

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmptyString(value: unknown, field: string, fail: Fail): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') return fail(field, 'must be a string');
  if (value.trim() === '') return fail(field, 'must not be empty');
  return value;
}

/** A SPIFFE trust domain goes between `spiffe://` and `/ns/`: no `/`, no spaces. */
function trustDomainOf(value: unknown, field: string, fail: Fail): string | undefined {
  const td = nonEmptyString(value, field, fail);
  if (td !== undefined && /[/\s]/.test(td)) fail(field, `${JSON.stringify(td)} is not a trust domain (no "/" or spaces)`);
  return td;
}

function aliasesOf(value: unknown, fail: Fail): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) return fail('trustDomainAliases', 'must be a list of strings');
  return value.map((v, i) => trustDomainOf(v, `trustDomainAliases[${i}]`, fail) ?? fail(`trustDomainAliases[${i}]`, 'must be a string'));
}

function booleanOf(value: unknown, field: string, fail: Fail): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') return fail(field, 'must be true or false');
  return value;
}

function normalizationOf(value: unknown, fail: Fail): PathNormalizationMode | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isMapping(value)) return fail('pathNormalization', 'must be a mapping (normalization: <mode>)');
  const mode = value.normalization;
  if (mode === undefined || mode === null) return undefined;
  if (typeof mode !== 'string') return fail('pathNormalization.normalization', 'must be a string');
  if (!(PATH_NORMALIZATION_MODES as readonly string[]).includes(mode)) {
    return fail('pathNormalization.normalization', `unknown mode ${JSON.stringify(mode)} (one of ${PATH_NORMALIZATION_MODES.join(', ')})`);
  }
  return mode as PathNormalizationMode;
}
