/**
 * `meshctl x workload entry configure`: reads the WorkloadGroup (file or API), the mesh config,
 * root certificate and gateway address from the cluster, gets a token for the group's service
 * account from the TokenRequest API, and writes the VM's files into the output directory.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { orchLibrary } from '../orch';
import { parse, parseAllDocuments } from 'yaml';
import { parseMeshConfig } from '../mesh-config';
import { apiErrorMessage, OrchClient, statusCodeOf } from '../orch';
import { UserError } from '../shared/user-error';
import { GroupTemplate, vmFiles } from './vm-files';
import { yamlDocumentValue } from '../shared/yaml-value';

export interface EntryConfigureOptions {
  systemNamespace: string;
  file?: string;
  name?: string;
  namespace?: string;
  output?: string;
  clusterId?: string;
  autoregister: boolean;
  captureDns: boolean;
  ingressIP?: string;
  ingressService: string;
  internalIP?: string;
  externalIP?: string;
  revision?: string;
  tokenDuration: number;
  /** Warnings for the user (stderr). */
  warn: (message: string) => void;
}

/** The audience the daemon's CA accepts tokens for (TOKEN_AUDIENCES default). */
export const MESH_TOKEN_AUDIENCE = 'mesh-ca';
export const ROOT_CERT_CONFIGMAP = 'mesh-ca-root-cert';
/** The daemon's CLUSTER_ID default: the cluster of a single-cluster mesh. */
export const DEFAULT_CLUSTER_ID = 'Orch';
const MAX_GROUP_FILE_BYTES = 1024 * 1024;

/** Writes the files; returns their paths. */
export async function configureEntry(client: OrchClient, o: EntryConfigureOptions): Promise<string[]> {
  if (!o.output) throw new UserError('requires an output directory (--output)');
  if (!Number.isInteger(o.tokenDuration) || o.tokenDuration <= 0) throw new UserError(`--tokenDuration ${o.tokenDuration}: must be a positive number of seconds`);
  for (const [flag, ip] of [['ingressIP', o.ingressIP], ['internalIP', o.internalIP], ['externalIP', o.externalIP]] as const) {
    if (ip && !isIp(ip)) throw new UserError(`--${flag} ${JSON.stringify(ip)}: not an IP address`);
  }
  const group = o.file ? groupFromFile(o.file, o.namespace) : await groupFromApi(client, o.name, o.namespace);
  const suffix = o.revision && o.revision !== 'default' ? `-${o.revision}` : '';
  const core = client.api(orchLibrary().CoreV1Api);

  const meshText = (await readConfigMap(core, o.systemNamespace, `mesh${suffix}`))?.data?.mesh ?? '';
  const where = `ConfigMap ${o.systemNamespace}/mesh${suffix} key mesh`;
  const values = parseMeshConfig(meshText, where);
  const meshConfig = ((meshText.trim() ? parse(meshText, { maxAliasCount: 100 }) : {}) ?? {}) as Record<string, unknown>;
  const configured = (meshConfig.defaultConfig as { discoveryAddress?: unknown } | undefined)?.discoveryAddress;
  const discoveryAddress = typeof configured === 'string' && configured ? configured : `meshd${suffix}.${o.systemNamespace}.svc:15012`;

  const rootCertPem = await rootCert(core, group.namespace, o.systemNamespace);
  const ingressIP = o.ingressIP || (await ingressAddress(core, o.ingressService, o.systemNamespace, o.warn));
  const token = await groupToken(core, group, o.tokenDuration);

  const files = vmFiles({
    group,
    clusterId: o.clusterId || DEFAULT_CLUSTER_ID,
    autoregister: o.autoregister,
    captureDns: o.captureDns,
    internalIP: o.internalIP,
    externalIP: o.externalIP,
    meshConfig,
    trustDomain: values.trustDomain,
    discoveryAddress,
    ingressIP,
    rootCertPem,
    token,
  });
  try {
    fs.mkdirSync(o.output, { recursive: true });
    return Object.entries(files).map(([name, content]) => {
      const file = path.join(o.output!, name);
      fs.writeFileSync(file, content, { mode: name === 'mesh-token' ? 0o600 : 0o644 });
      return file;
    });
  } catch (err) {
    throw new UserError(`cannot write to --output ${o.output}: ${(err as Error).message}`);
  }
}

function isIp(s: string): boolean {
  return /^(\d{1,3})(\.\d{1,3}){3}$/.test(s) ? s.split('.').every((p) => Number(p) <= 255) : /^[0-9a-fA-F:]+$/.test(s) && s.includes(':');
}

/** The template of a WorkloadGroup object, checked; `where` names it in errors. */
export function groupTemplate(obj: unknown, where: string, namespace?: string): GroupTemplate {
  const o = obj as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown }; spec?: { metadata?: { labels?: unknown }; template?: Record<string, unknown> } } | null;
  if (!o || typeof o !== 'object' || o.kind !== 'WorkloadGroup') throw new UserError(`${where}: not a WorkloadGroup`);
  const name = o.metadata?.name;
  if (typeof name !== 'string' || !name) throw new UserError(`${where}: WorkloadGroup has no metadata.name`);
  const ns = (typeof o.metadata?.namespace === 'string' && o.metadata.namespace) || namespace || 'default';
  const template = o.spec?.template;
  if (!template || typeof template !== 'object') throw new UserError(`${where}: WorkloadGroup ${ns}/${name} has no spec.template`);
  const labels = { ...stringMap(template.labels, `${where}: spec.template.labels`), ...stringMap(o.spec?.metadata?.labels, `${where}: spec.metadata.labels`) };
  const sa = template.serviceAccount ?? 'default';
  const network = template.network ?? '';
  if (typeof sa !== 'string' || !sa) throw new UserError(`${where}: spec.template.serviceAccount must be a name`);
  if (typeof network !== 'string') throw new UserError(`${where}: spec.template.network must be a string`);
  return { name, namespace: ns, labels, serviceAccount: sa, network };
}

function stringMap(v: unknown, where: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v) || Object.values(v).some((x) => typeof x !== 'string')) throw new UserError(`${where} must map names to strings`);
  return v as Record<string, string>;
}

function groupFromFile(file: string, namespace?: string): GroupTemplate {
  let text: string;
  try {
    if (fs.statSync(file).size > MAX_GROUP_FILE_BYTES) throw new UserError(`${file}: larger than ${MAX_GROUP_FILE_BYTES} bytes`);
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(`cannot read --file ${file}: ${(err as Error).message}`);
  }
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs) || docs.length === 0) throw new UserError(`${file}: no WorkloadGroup in it`);
  const doc = docs[0];
  return groupTemplate(yamlDocumentValue(doc, file), file, namespace);
}

async function groupFromApi(client: OrchClient, name?: string, namespace?: string): Promise<GroupTemplate> {
  if (!name || !namespace) throw new UserError('expecting a WorkloadGroup: give --file, or --name and --namespace');
  const where = `WorkloadGroup ${namespace}/${name}`;
  try {
    const obj = await client.api(orchLibrary().CustomObjectsApi).getNamespacedCustomObject({ group: 'networking.mesh.io', version: 'v1', namespace, plural: 'workloadgroups', name });
    return groupTemplate(obj, where, namespace);
  } catch (err) {
    if (err instanceof UserError) throw err;
    if (statusCodeOf(err) === 404) throw new UserError(`${where} not found`);
    throw new UserError(`cannot read ${where}: ${apiErrorMessage(err)}`);
  }
}

async function readConfigMap(core: k8s.CoreV1Api, namespace: string, name: string): Promise<k8s.V1ConfigMap | undefined> {
  try {
    return await core.readNamespacedConfigMap({ name, namespace });
  } catch (err) {
    if (statusCodeOf(err) === 404) return undefined;
    throw new UserError(`cannot read ConfigMap ${namespace}/${name}: ${apiErrorMessage(err)}`);
  }
}

/** The mesh roots as published into the workload's namespace (else the system namespace). */
async function rootCert(core: k8s.CoreV1Api, namespace: string, systemNamespace: string): Promise<string> {
  for (const ns of namespace === systemNamespace ? [namespace] : [namespace, systemNamespace]) {
    const pem = (await readConfigMap(core, ns, ROOT_CERT_CONFIGMAP))?.data?.['root-cert.pem'];
    if (pem) return pem;
  }
  throw new UserError(`no root certificate: ConfigMap ${namespace}/${ROOT_CERT_CONFIGMAP} (key root-cert.pem) not found; is the mesh's daemon running?`);
}

/** The load balancer address of `--ingressService` (`svc` or `svc.namespace`); '' with a warning when it has none. */
async function ingressAddress(core: k8s.CoreV1Api, service: string, systemNamespace: string, warn: (m: string) => void): Promise<string> {
  const dot = service.indexOf('.');
  const name = dot < 0 ? service : service.slice(0, dot);
  const namespace = dot < 0 ? systemNamespace : service.slice(dot + 1);
  let svc: k8s.V1Service;
  try {
    svc = await core.readNamespacedService({ name, namespace });
  } catch (err) {
    warn(`Warning: cannot read the gateway Service ${namespace}/${name} (${statusCodeOf(err) === 404 ? 'not found' : apiErrorMessage(err)}); hosts is empty: give --ingressIP`);
    return '';
  }
  const ingress = svc.status?.loadBalancer?.ingress?.find((i) => i.ip);
  if (!ingress?.ip) {
    warn(`Warning: the gateway Service ${namespace}/${name} has no load balancer IP; hosts is empty: give --ingressIP`);
    return '';
  }
  return ingress.ip;
}

async function groupToken(core: k8s.CoreV1Api, group: GroupTemplate, seconds: number): Promise<string> {
  const where = `ServiceAccount ${group.namespace}/${group.serviceAccount}`;
  try {
    const answer = await core.createNamespacedServiceAccountToken({
      name: group.serviceAccount,
      namespace: group.namespace,
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: [MESH_TOKEN_AUDIENCE], expirationSeconds: seconds } },
    });
    if (!answer.status?.token) throw new UserError(`the TokenRequest for ${where} returned no token`);
    return answer.status.token;
  } catch (err) {
    if (err instanceof UserError) throw err;
    if (statusCodeOf(err) === 404) throw new UserError(`${where} not found: create the WorkloadGroup's service account first`);
    throw new UserError(`cannot get a token for ${where}: ${apiErrorMessage(err)}`);
  }
}
