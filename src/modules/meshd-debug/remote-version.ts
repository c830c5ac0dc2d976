import { stringify } from 'yaml';
import { BuildInfo } from '../build-info';
import { formatVersion } from '../cli';
import { answersByInstance, DaemonSession } from './daemon-session';
import { DEBUG_SYNCZ_TYPE, JsonObject, synczJson } from './sync-status';

/**
 * `meshctl version` with the control plane (the incumbent's `version` over xDS): the client's
 * build, each daemon's build (from the `control_plane.identifier` of its syncz answer) and the
 * proxies' versions (their node metadata MESH_VERSION in that answer), printed as the
 * incumbent prints them.
 */

/** One daemon's build. */
export interface ServerInfo {
  Component: string;
  Revision: string;
  Info: BuildInfo;
}

/** One proxy's version. */
export interface ProxyInfo {
  ID: string;
  MeshVersion: string;
}

export interface VersionReport {
  clientVersion: BuildInfo;
  meshVersion?: ServerInfo[];
  dataPlaneVersion?: ProxyInfo[];
}

/** Every daemon's build and every proxy's version, from their syncz answers (daemons sorted by instance ID). */
export async function controlPlaneVersions(session: DaemonSession, revision: string): Promise<Required<Pick<VersionReport, 'meshVersion' | 'dataPlaneVersion'>>> {
  const answers = [...answersByInstance(await session.askAll(DEBUG_SYNCZ_TYPE))].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r);
  return { meshVersion: answers.map((r) => serverInfo(r.controlPlane, revision)), dataPlaneVersion: proxyVersions(answers.map(synczJson)) };
}

/**
 * The daemon's build its identifier names (`{"Component","ID","Revision","Info"}`); unreadable
 * ones say so. `revision` stands in when the identifier names none.
 */
export function serverInfo(identifier: string | undefined, revision: string): ServerInfo {
  const missing = (what: string): ServerInfo => ({ Component: what, Revision: revision, Info: { version: what, revision: '', nodeVersion: '', status: '', tag: '' } });
  if (!identifier) return missing('MISSING CP ID');
  let parsed: { Component?: unknown; Revision?: unknown; Info?: Record<string, unknown> };
  try {
    parsed = JSON.parse(identifier);
  } catch {
    return missing('INVALID CP ID');
  }
  const info = parsed.Info ?? {};
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  return {
    Component: str(parsed.Component) || 'meshd',
    Revision: str(parsed.Revision) || revision,
    Info: { version: str(info.version), revision: str(info.revision), nodeVersion: str(info.nodeVersion), status: str(info.status), tag: str(info.tag) },
  };
}

/** Each proxy once (a proxy shows in the answer of the daemon it is connected to), sorted by ID. */
export function proxyVersions(synczResponses: readonly JsonObject[]): ProxyInfo[] {
  const byId = new Map<string, string>();
  for (const response of synczResponses) {
    for (const r of (response.resources ?? []) as JsonObject[]) {
      const node = (r.node ?? {}) as JsonObject;
      const meta = (node.metadata ?? {}) as JsonObject;
      byId.set(String(node.id ?? ''), typeof meta.MESH_VERSION === 'string' ? meta.MESH_VERSION : '');
    }
  }
  return [...byId].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([ID, MeshVersion]) => ({ ID, MeshVersion }));
}

export function renderVersionReport(report: VersionReport, output: string | undefined, short: boolean): string {
  if (output === 'json') return `${JSON.stringify(report, null, 2)}\n`;
  if (output === 'yaml') return stringify(report);
  const lines: string[] = [];
  const servers = report.meshVersion;
  if (short) {
    if (servers) {
      lines.push(`client version: ${report.clientVersion.version}`);
      for (const s of coalesce(servers)) lines.push(`${s.Component} version: ${s.Info.version}`);
    } else {
      lines.push(report.clientVersion.version);
    }
    if (report.dataPlaneVersion) lines.push(`data plane version: ${proxyVersionSummary(report.dataPlaneVersion)}`);
  } else {
    if (servers) {
      lines.push(formatVersion(report.clientVersion, undefined, false, 'client version:'));
      for (const s of servers) lines.push(formatVersion(s.Info, undefined, false, `${s.Component} version:`));
    } else {
      lines.push(formatVersion(report.clientVersion, undefined, false));
    }
    for (const p of report.dataPlaneVersion ?? []) lines.push(`data plane version: version.ProxyInfo{ID:${JSON.stringify(p.ID)}, MeshVersion:${JSON.stringify(p.MeshVersion)}}`);
  }
  return lines.map((l) => `${l}\n`).join('');
}

/** Daemons of one version are one `control plane`; different versions are listed one by one. */
function coalesce(servers: readonly ServerInfo[]): readonly ServerInfo[] {
  if (servers.length === 0 || servers.every((s) => s.Info.version === servers[0].Info.version)) {
    return servers.length === 0 ? [] : [{ ...servers[0], Component: 'control plane' }];
  }
  return servers;
}

/** `1.2.3 (2 proxies), 1.2.4 (1 proxies)`, versions sorted; `none` without proxies. */
export function proxyVersionSummary(proxies: readonly ProxyInfo[]): string {
  if (proxies.length === 0) return 'none';
  const counts = new Map<string, number>();
  for (const p of proxies) counts.set(p.MeshVersion || 'unknown', (counts.get(p.MeshVersion || 'unknown') ?? 0) + 1);
  return [...counts]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([v, n]) => `${v} (${n} proxies)`)
    .join(', ');
}
