import * as fs from 'node:fs';
import { stringify } from 'yaml';
import { decodeMessage } from '../envoy/protos';
import { UserError } from '../shared/user-error';
import { answersByInstance, DaemonSession, OrchReach } from './daemon-session';
import { ConfigDumpJson, syncDiff } from './sync-diff';
import { DEBUG_SYNCZ_TYPE, filterNamespace, statusTable, synczJson } from './sync-status';

/** The debug type answering with what the daemon would send one proxy (the incumbent's `istio.io/debug/config_dump`). */
export const DEBUG_CONFIG_DUMP_TYPE = 'mesh.io/debug/config_dump';

export interface StatusListOptions {
  /** `-n`: only the proxies of that namespace. */
  namespace?: string;
  output?: 'json' | 'yaml';
  verbosity: number;
}

/**
 * `proxy-status` without a proxy: every daemon's syncz answer, as the table of every proxy,
 * or the answers as received (`-o json|yaml`: one daemon's response, or with several an
 * object of them by instance ID, as the conformance inputs are).
 */
export async function proxyStatusList(session: DaemonSession, o: StatusListOptions): Promise<string> {
  const answers = answersByInstance(await session.askAll(DEBUG_SYNCZ_TYPE));
  const responses = new Map([...answers].map(([id, r]) => [id, o.namespace ? filterNamespace(synczJson(r), o.namespace) : synczJson(r)]));
  if (o.output) {
    const data: unknown = responses.size === 1 ? [...responses.values()][0] : Object.fromEntries(responses);
    return o.output === 'json' ? `${JSON.stringify(data, null, 4)}\n` : stringify(data);
  }
  return statusTable([...responses.values()], o.verbosity);
}

/** Larger dumps are refused unread. */
const MAX_DUMP_BYTES = 256 * 1024 * 1024;

/** `--file`: a saved config dump, `-` for stdin. */
export function readProxyDumpFile(file: string): ConfigDumpJson {
  const from = file === '-' ? 'stdin' : file;
  let text: string;
  try {
    if (file !== '-' && fs.statSync(file).size > MAX_DUMP_BYTES) throw new UserError(`${file} is larger than ${MAX_DUMP_BYTES / 1024 / 1024} MiB; not a config dump`);
    text = fs.readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(`cannot read the config dump ${from}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return parseProxyDump(text, from);
}

/** The proxy admin port the incumbent reads a pod's config dump from. */
export const PROXY_ADMIN_PORT = 15000;

/** The live config dump of the proxy in `pod`, from its admin port through a port-forward. */
export async function proxyConfigDump(reach: OrchReach, pod: { name: string; namespace: string }): Promise<ConfigDumpJson> {
  const body = await reach.podGet(pod, PROXY_ADMIN_PORT, '/config_dump');
  return parseProxyDump(body.toString('utf8'), `the config dump of pod ${pod.name}.${pod.namespace}`);
}

/** A proxy's config dump (its admin `/config_dump`) as read: JSON with a `configs` list. */
export function parseProxyDump(text: string, from: string): ConfigDumpJson {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new UserError(`${from} is not a proxy config dump: not JSON (${(err as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || !Array.isArray((parsed as ConfigDumpJson).configs)) {
    throw new UserError(`${from} is not a proxy config dump: it has no "configs" list`);
  }
  return parsed as ConfigDumpJson;
}

/**
 * `proxy-status <pod>`: what the daemon serving the proxy would send it (asked of each daemon
 * in turn until one has the proxy) against `proxyDump`, what the proxy has.
 */
export async function proxyStatusDiff(session: DaemonSession, proxyId: string, proxyDump: ConfigDumpJson, timeZone?: string): Promise<string> {
  const response = await session.askFirst(DEBUG_CONFIG_DUMP_TYPE, [proxyId]);
  if (response.resources.length === 0) throw new UserError(`the daemon sent no config dump for ${proxyId}`);
  const daemonDump: ConfigDumpJson = { configs: response.resources.map((r) => ({ '@type': r.typeUrl, ...decodeMessage(r.typeUrl, r.value) })) };
  return syncDiff(daemonDump, proxyDump, timeZone).text;
}
