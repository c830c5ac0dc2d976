import { alignColumns } from './columns';
import { ConfigDump, obj, requireSection, str } from './dump';
import { toProtoJson } from './proto-json';

/** The bootstrap section as the reference prints it: `{bootstrap: ...}` in proto3 JSON. */
export function bootstrapData(dump: ConfigDump): unknown {
  const { '@type': _type, last_updated: _updated, ...rest } = requireSection(dump, 'BootstrapConfigDump');
  return toProtoJson(rest);
}

/** The `Mesh Version:`, `Mesh Proxy Version:` and `Envoy Version:` lines. */
export function versionSummary(dump: ConfigDump): string {
  const node = obj(obj(requireSection(dump, 'BootstrapConfigDump').bootstrap).node);
  const meta = obj(node.metadata);
  const build = obj(node.user_agent_build_version ?? node.userAgentBuildVersion);
  const v = obj(build.version);
  const n = (x: unknown) => (typeof x === 'number' ? x : 0);
  const num = `${n(v.major_number ?? v.majorNumber)}.${n(v.minor_number ?? v.minorNumber)}.${n(v.patch)}`;
  const bm = obj(build.metadata);
  const details = ['revision.status', 'build.type', 'ssl.version'].map((k) => str(bm[k])).filter(Boolean);
  return alignColumns(
    [
      ['Mesh Version:', str(meta.MESH_VERSION)],
      ['Mesh Proxy Version:', str(meta.MESH_PROXY_SHA).replace(/^mesh-proxy:/, '')],
      ['Envoy Version:', [num, ...details].join('/')],
    ],
    1,
  );
}
