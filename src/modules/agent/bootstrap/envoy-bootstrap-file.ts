/**
 * The bootstrap file the agent hands Envoy: the default bootstrap (or `--templateFile`), with
 * `MESH_BOOTSTRAP_OVERRIDE` merged over it, checked field by field against the Envoy protos
 * and encoded as `envoy.config.bootstrap.v3.Bootstrap`, then written to
 * `<configPath>/envoy-rev.json`. A mistake in a template or override is reported here, naming
 * the flag or setting and the field, before Envoy would see it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { encodeMessage, messageType } from '../../envoy/protos';
import { defaultEnvoyBootstrap, ENVOY_BOOTSTRAP_FILE, EnvoyBootstrapOptions } from './envoy-bootstrap';
import { writeFileAtomically } from './atomic-write';
import { BootstrapError } from './errors';
import { isPlainObject, Json, ProtoJsonError, protoJsonToObject } from './proto-json';
import { mergeProtoJson } from './proto-merge';
import { renderBootstrapTemplate, templateValues } from './template';

export const BOOTSTRAP_TYPE = 'envoy.config.bootstrap.v3.Bootstrap';

type JsonObject = { [key: string]: Json };

export interface EnvoyBootstrapInputs extends EnvoyBootstrapOptions {
  /** ProxyConfig `configPath`: the directory the bootstrap file is written to. */
  configPath: string;
  /** ProxyConfig `discoveryAddress` (for the template's DISCOVERY_ADDRESS). */
  discoveryAddress: string;
  /** `--templateFile`: a bootstrap of the user's own that replaces the default; empty = the default. */
  templateFile?: string;
  /** `MESH_BOOTSTRAP_OVERRIDE`: a JSON or YAML file merged over the bootstrap; empty = none. */
  overrideFile?: string;
}

/** The final bootstrap document (proto3 JSON), validated. Throws BootstrapError. */
export function buildEnvoyBootstrap(inputs: EnvoyBootstrapInputs): JsonObject {
  let bootstrap: JsonObject;
  if (inputs.templateFile) {
    const text = readText(inputs.templateFile, `--templateFile ${inputs.templateFile}`);
    bootstrap = renderBootstrapTemplate(text, templateValues(inputs), inputs.templateFile);
    checkBootstrap(bootstrap, `--templateFile ${inputs.templateFile}`);
  } else {
    bootstrap = defaultEnvoyBootstrap(inputs);
  }
  if (inputs.overrideFile) {
    const where = `MESH_BOOTSTRAP_OVERRIDE ${inputs.overrideFile}`;
    const override = readBootstrapOverride(inputs.overrideFile);
    checkBootstrap(override, where, { partial: true });
    bootstrap = mergeProtoJson(messageType(BOOTSTRAP_TYPE), bootstrap, override);
    checkBootstrap(bootstrap, `the bootstrap with ${where} merged in (lists are appended to, as Envoy merges)`);
  } else if (!inputs.templateFile) {
    checkBootstrap(bootstrap, 'the generated bootstrap');
  }
  return bootstrap;
}

/** Builds the bootstrap and writes it to `<configPath>/envoy-rev.json`; returns that path. */
export function writeEnvoyBootstrap(inputs: EnvoyBootstrapInputs): string {
  const bootstrap = buildEnvoyBootstrap(inputs);
  const file = path.join(inputs.configPath, ENVOY_BOOTSTRAP_FILE);
  writeFileAtomically(file, `${JSON.stringify(bootstrap, null, 2)}\n`, 'the Envoy bootstrap');
  return file;
}

/** The override file, parsed (JSON or YAML). Throws BootstrapError naming MESH_BOOTSTRAP_OVERRIDE. */
export function readBootstrapOverride(file: string): JsonObject {
  const where = `MESH_BOOTSTRAP_OVERRIDE ${file}`;
  const text = readText(file, where);
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (e) {
    throw new BootstrapError(`${where}: not valid JSON or YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  if (!isPlainObject(parsed)) throw new BootstrapError(`${where}: must be a JSON or YAML object (fields of an Envoy Bootstrap), not ${parsed === null ? 'empty' : typeof parsed}`);
  return parsed;
}

/**
 * Checks `document` against envoy.config.bootstrap.v3.Bootstrap and encodes it; `where` starts
 * every error message. A `partial` document (an override) skips the whole-bootstrap checks.
 */
export function checkBootstrap(document: unknown, where: string, { partial = false } = {}): Buffer {
  let object: Record<string, unknown>;
  try {
    object = protoJsonToObject(messageType(BOOTSTRAP_TYPE), document);
  } catch (e) {
    if (e instanceof ProtoJsonError) throw new BootstrapError(`${where}: ${e.message}`);
    throw e;
  }
  let encoded: Buffer;
  try {
    encoded = encodeMessage(BOOTSTRAP_TYPE, object);
  } catch (e) {
    throw new BootstrapError(`${where}: does not encode as ${BOOTSTRAP_TYPE}: ${(e as Error).message}`);
  }
  if (!partial) checkWhole(object, where);
  return encoded;
}

/** What Envoy would refuse at start that the protos alone do not say. */
function checkWhole(bootstrap: Record<string, unknown>, where: string): void {
  const node = bootstrap.node as { id?: string; cluster?: string } | undefined;
  if (!node?.id) throw new BootstrapError(`${where}: node.id: must be set (Envoy needs a node ID to fetch its configuration)`);
  const statics = (bootstrap.static_resources ?? {}) as { clusters?: { name?: string }[]; listeners?: { name?: string }[] };
  for (const [list, items] of [['clusters', statics.clusters ?? []], ['listeners', statics.listeners ?? []]] as const) {
    const seen = new Map<string, number>();
    items.forEach((item, i) => {
      if (!item.name) return; // Envoy names unnamed static listeners itself
      const first = seen.get(item.name);
      if (first !== undefined) {
        throw new BootstrapError(`${where}: static_resources.${list}[${i}]: name ${JSON.stringify(item.name)} is already used by static_resources.${list}[${first}]`);
      }
      seen.set(item.name, i);
    });
  }
  const ads = (bootstrap.dynamic_resources as { ads_config?: { grpc_services?: { envoy_grpc?: { cluster_name?: string } }[] } } | undefined)?.ads_config;
  for (const [i, service] of (ads?.grpc_services ?? []).entries()) {
    const name = service.envoy_grpc?.cluster_name;
    if (name && !(statics.clusters ?? []).some((c) => c.name === name)) {
      throw new BootstrapError(`${where}: dynamic_resources.ads_config.grpc_services[${i}].envoy_grpc.cluster_name: no static cluster is named ${JSON.stringify(name)}`);
    }
  }
}

function readText(file: string, where: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new BootstrapError(`${where}: cannot read the file: ${(e as Error).message}`);
  }
}
