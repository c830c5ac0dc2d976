import * as fs from 'node:fs';
import type * as k8s from '@kubernetes/client-node';
import { orchLibrary } from '../orch';
import { apiErrorMessage, OrchClient } from '../orch';
import { UserError } from '../shared/user-error';
import { ensureReaderAccount, READER_RULES, serviceAccountToken } from './reader-account';
import { readerRulesFrom } from './manifest-rules';
import { defaultSecretName, RemoteAuth, remoteSecretYaml, RemoteSecretType } from './secret-doc';

/** `meshctl create-remote-secret`'s flags, checked by the command's flag definitions. */
export interface CreateRemoteSecretOptions {
  /** The system namespace (`--meshNamespace`). */
  namespace: string;
  type: RemoteSecretType;
  authType: 'bearer-token' | 'plugin';
  authPluginName?: string;
  authPluginConfig: Record<string, string>;
  createServiceAccount: boolean;
  manifests?: string;
  name?: string;
  secretName?: string;
  server?: string;
  serviceAccount?: string;
}

/** Cluster IDs become a Secret data key. */
const CLUSTER_NAME = /^[-._a-zA-Z0-9]+$/;

/** Builds the remote secret of the cluster `client` reaches, creating the service account first when asked. */
export async function createRemoteSecret(client: OrchClient, options: CreateRemoteSecretOptions): Promise<string> {
  if (options.authType === 'plugin' && !options.authPluginName) throw new UserError('--auth-plugin-name is required with --auth-type plugin');
  if (options.authType !== 'plugin' && (options.authPluginName || Object.keys(options.authPluginConfig).length > 0)) {
    throw new UserError('--auth-plugin-name and --auth-plugin-config need --auth-type plugin');
  }
  if (options.server !== undefined && !isServerUrl(options.server)) throw new UserError(`--server ${JSON.stringify(options.server)}: expected the API server's URL, e.g. https://host:6443`);
  const namespace = options.namespace;
  const clusterName = options.name || (await namespaceUid(client, namespace));
  if (!CLUSTER_NAME.test(clusterName)) throw new UserError(`--name ${JSON.stringify(clusterName)}: a cluster name may hold only letters, digits, '-', '_' and '.'`);
  const serviceAccount = options.serviceAccount || (options.type === 'config' ? 'meshd' : 'mesh-reader-service-account');
  const { server, caData } = serverOf(client.kubeConfig, options.server);

  let auth: RemoteAuth;
  if (options.authType === 'plugin') {
    auth = { kind: 'plugin', name: options.authPluginName!, config: options.authPluginConfig };
    if (options.createServiceAccount) await ensureReaderAccount(client, namespace, serviceAccount, readerRules(options.manifests));
  } else {
    if (options.createServiceAccount) await ensureReaderAccount(client, namespace, serviceAccount, readerRules(options.manifests));
    auth = { kind: 'bearer-token', token: await serviceAccountToken(client, namespace, serviceAccount) };
  }
  return remoteSecretYaml({ clusterName, secretName: options.secretName || defaultSecretName(clusterName), namespace, type: options.type, server, caData, auth });
}

function readerRules(manifests: string | undefined): k8s.V1PolicyRule[] {
  return manifests ? readerRulesFrom(manifests) : READER_RULES;
}

async function namespaceUid(client: OrchClient, namespace: string): Promise<string> {
  try {
    const ns = await client.api(orchLibrary().CoreV1Api).readNamespace({ name: namespace });
    if (!ns.metadata?.uid) throw new UserError(`Namespace ${namespace} has no UID; give the cluster name with --name`);
    return ns.metadata.uid;
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(`cannot read Namespace ${namespace} for the cluster name (give it with --name): ${apiErrorMessage(err)}`);
  }
}

/** The API server address (`--server` or the current context's) and the CA the config trusts, base64. */
function serverOf(kc: k8s.KubeConfig, serverFlag: string | undefined): { server: string; caData: string } {
  const cluster = kc.getCurrentCluster();
  if (!cluster && !serverFlag) throw new UserError(`the orchestrator config has no current cluster (context ${JSON.stringify(kc.getCurrentContext())}); give the address with --server`);
  let caData = cluster?.caData ?? '';
  if (!caData && cluster?.caFile) {
    try {
      caData = fs.readFileSync(cluster.caFile).toString('base64');
    } catch (err) {
      throw new UserError(`cannot read the CA file ${cluster.caFile} of cluster ${cluster.name}: ${(err as Error).message}`);
    }
  }
  return { server: serverFlag || cluster!.server, caData };
}

function isServerUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
  } catch {
    return false;
  }
}
