import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { encodeMessage } from '../../../src/modules/envoy/protos';
import {
  canonicalMessage,
  certificateNamespace,
  channelSecurity,
  lookupMessage,
  podOfTarget,
  proxyVersions,
  proxyVersionSummary,
  renderVersionReport,
  rfc1123,
  serverInfo,
  splitLines,
  syncDiff,
  unifiedDiff,
} from '../../../src/modules/meshd-debug';
import { parseDebugRequest, XdsDebugError } from '../../../src/modules/xds/debug-requests';
import { makeServingIdentity } from '../../helpers/orch-api/tls';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const diff = (a: string, b: string) => unifiedDiff(splitLines(a), splitLines(b), 'from', 'to', 7);

describe('meshd-debug: the unified diff', () => {
  it('prints what difflib prints: hunks with seven lines of context, split where more is unchanged', () => {
    // The expected texts are Python difflib.unified_diff's for the same lines (n=7).
    const letters = 'abcdefghijklmnopqrstuvwxyz'.split('');
    const changed = [...letters];
    changed[3] = 'X';
    changed[23] = 'Y';
    changed.push('extra');
    expect(diff(letters.join('\n') + '\n', changed.join('\n') + '\n')).to.equal(
      '--- from\n+++ to\n@@ -1,11 +1,11 @@\n a\n b\n c\n-d\n+X\n e\n f\n g\n h\n i\n j\n k\n@@ -17,11 +17,12 @@\n q\n r\n s\n t\n u\n v\n w\n-x\n+Y\n y\n z\n+extra\n \n',
    );
    expect(diff('one\ntwo\nthree\n', 'zero\none\nthree\nfour\n')).to.equal('--- from\n+++ to\n@@ -1,4 +1,5 @@\n+zero\n one\n-two\n three\n+four\n \n');
    expect(diff('same\n', 'same\n')).to.equal('');
    expect(diff('', 'new\nlines\n')).to.equal('--- from\n+++ to\n@@ -1 +1,3 @@\n+new\n+lines\n \n');
    expect(diff('{\n   "a": 1,\n   "b": 2\n}', '{\n   "a": 1,\n   "b": 3,\n   "c": 4\n}')).to.equal(
      '--- from\n+++ to\n@@ -1,4 +1,5 @@\n {\n    "a": 1,\n-   "b": 2\n+   "b": 3,\n+   "c": 4\n }\n',
    );
  });

  it('gives a diff that turns the first text into the second, for any pair', () => {
    let seed = 17;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 300; round++) {
      const a = Array.from({ length: random(30) }, () => `l${random(6)}\n`);
      const b = Array.from({ length: random(30) }, () => `l${random(6)}\n`);
      const text = unifiedDiff(a, b, 'a', 'b', 2);
      expect(applyPatch(a, text), `round ${round}`).to.deep.equal(b);
    }
  });
});

/** Applies a unified diff to `a` (checking its context and removed lines). */
function applyPatch(a: string[], patch: string): string[] {
  if (patch === '') return [...a];
  const lines = patch.split(/(?<=\n)/).slice(2);
  const out: string[] = [];
  let at = 0;
  for (let i = 0; i < lines.length; ) {
    const m = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@\n$/.exec(lines[i]);
    if (!m) throw new Error(`not a hunk header: ${lines[i]}`);
    const start = Number(m[1]) - (m[2] === '0' ? 0 : 1);
    out.push(...a.slice(at, start));
    at = start;
    i++;
    while (i < lines.length && !lines[i].startsWith('@@')) {
      const [tag, rest] = [lines[i][0], lines[i].slice(1)];
      if (tag === ' ' || tag === '-') {
        if (a[at] !== rest) throw new Error(`line ${at + 1}: expected ${JSON.stringify(rest)}, have ${JSON.stringify(a[at])}`);
        at++;
      }
      if (tag === ' ' || tag === '+') out.push(rest);
      i++;
    }
  }
  return [...out, ...a.slice(at)];
}

describe('meshd-debug: canonical proto3 JSON', () => {
  const cluster = lookupMessage('type.googleapis.com/envoy.config.cluster.v3.Cluster')!;

  it('reads the proxy dump form and the protobuf form of a message the same way', () => {
    const protobufForm = {
      name: 'outbound|80||a.svc',
      type: 'EDS',
      connect_timeout: { seconds: '1', nanos: 500_000_000 },
      per_connection_buffer_limit_bytes: { value: 32768 },
      metadata: { filter_metadata: { mesh: { fields: { services: { list_value: { values: [{ struct_value: { fields: { host: { string_value: 'a.svc' } } } }] } } } } } },
      eds_cluster_config: { eds_config: { ads: {}, resource_api_version: 'V3' } },
      typed_extension_protocol_options: { z: { '@type': 'type.googleapis.com/google.protobuf.Struct', value: {} }, a: { '@type': 'type.googleapis.com/google.protobuf.Struct', value: {} } },
    };
    const proxyForm = {
      name: 'outbound|80||a.svc',
      type: 3,
      connectTimeout: '1.5s',
      per_connection_buffer_limit_bytes: 32768,
      metadata: { filter_metadata: { mesh: { services: [{ host: 'a.svc' }] } } },
      eds_cluster_config: { eds_config: { ads: {}, resource_api_version: 'V3' } },
      typed_extension_protocol_options: { a: { '@type': 'type.googleapis.com/google.protobuf.Struct', value: {} }, z: { '@type': 'type.googleapis.com/google.protobuf.Struct', value: {} } },
      lb_policy: 'ROUND_ROBIN',
      ignore_health_on_host_removal: false,
    };
    const a = canonicalMessage(cluster, protobufForm);
    expect(canonicalMessage(cluster, proxyForm)).to.deep.equal(a);
    expect(JSON.stringify(a)).to.equal(
      JSON.stringify({
        name: 'outbound|80||a.svc',
        type: 'EDS',
        edsClusterConfig: { edsConfig: { ads: {}, resourceApiVersion: 'V3' } },
        connectTimeout: '1.500s',
        perConnectionBufferLimitBytes: 32768,
        // Fields in the order the proto declares them, map keys sorted.
        typedExtensionProtocolOptions: { a: { '@type': 'type.googleapis.com/google.protobuf.Struct', value: {} }, z: { '@type': 'type.googleapis.com/google.protobuf.Struct', value: {} } },
        metadata: { filterMetadata: { mesh: { services: [{ host: 'a.svc' }] } } },
      }),
    );
  });

  it('decodes an encoded Any, keeps fields it does not know, and writes int64 as text', () => {
    const body = encodeMessage('type.googleapis.com/envoy.config.cluster.v3.Cluster', { name: 'c', max_requests_per_connection: { value: 3 } });
    const any = lookupMessage('google.protobuf.Any')!;
    expect(canonicalMessage(any, { type_url: 'type.googleapis.com/envoy.config.cluster.v3.Cluster', value: body.toString('base64') })).to.deep.equal({
      '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
      name: 'c',
      maxRequestsPerConnection: 3,
    });
    expect(canonicalMessage(cluster, { name: 'c', from_a_newer_proxy: { b: 1, a: 2 } })).to.deep.equal({ name: 'c', from_a_newer_proxy: { a: 2, b: 1 } });
    const dump = lookupMessage('envoy.admin.v3.ClustersConfigDump')!;
    expect(canonicalMessage(dump, { dynamic_active_clusters: [{ last_updated: { seconds: '1596522174', nanos: 250_000_000 } }] })).to.deep.equal({
      dynamicActiveClusters: [{ lastUpdated: '2020-08-04T06:22:54.250Z' }],
    });
    const outlier = lookupMessage('envoy.config.cluster.v3.OutlierDetection')!;
    expect(canonicalMessage(outlier, { consecutive_5xx: { value: 0 }, base_ejection_time: '30s' })).to.deep.equal({ consecutive5xx: 0, baseEjectionTime: '30s' });
  });
});

describe('meshd-debug: the sync diff of two dumps', () => {
  const listenerDump = (entries: Obj[]) => ({ '@type': 'type.googleapis.com/envoy.admin.v3.ListenersConfigDump', dynamic_listeners: entries });
  const listener = (name: string, port: number) => ({ '@type': 'type.googleapis.com/envoy.config.listener.v3.Listener', name, address: { socket_address: { address: '127.0.0.1', port_value: port } } });

  it('leaves versions, load times, listener names and draining states out, and sorts by name', () => {
    const daemon = { configs: [listenerDump([{ name: 'b', active_state: { version_info: 'v1', listener: listener('b', 2) } }, { name: 'a', active_state: { version_info: 'v1', listener: listener('a', 1) } }])] };
    const proxy = {
      configs: [
        listenerDump([
          { name: 'a', active_state: { version_info: 'v7', last_updated: '2024-01-01T00:00:00Z', listener: listener('a', 1) } },
          { name: 'b', active_state: { listener: listener('b', 2) }, draining_state: { listener: listener('b', 9) } },
          { name: 'c', warming_state: { listener: listener('c', 3) } },
        ]),
      ],
    };
    const result = syncDiff(daemon, proxy, 'UTC');
    // Neither has clusters or routes: alike.
    expect(result.text).to.equal('Clusters Match\nListeners Match\nRoutes Match\n');
    expect(result.matches).to.equal(true);
  });

  it("says which dump lacks a section, and Routes Don't Match with the latest load time", () => {
    const routes = (configs: Obj[]) => ({ '@type': 'type.googleapis.com/envoy.admin.v3.RoutesConfigDump', dynamic_route_configs: configs });
    const route = (name: string, hosts: string[]) => ({ '@type': 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration', name, virtual_hosts: hosts.map((h) => ({ name: h, domains: [h] })) });
    const daemon = { configs: [listenerDump([]), routes([{ route_config: route('80', ['b', 'a']) }])] };
    const proxy = {
      configs: [
        { '@type': 'type.googleapis.com/envoy.admin.v3.ClustersConfigDump' },
        listenerDump([]),
        routes([
          { route_config: route('80', ['a', 'b', 'c']), last_updated: '2020-08-04T06:22:54Z' },
          { route_config: route('81', []), last_updated: '2020-08-04T06:22:50Z' },
        ]),
      ],
    };
    const result = syncDiff(daemon, proxy, 'UTC');
    expect(result.matches).to.equal(false);
    const [clusters, listeners, routesPart] = result.text.split(/\n(?=Listeners|Routes)/);
    expect(clusters).to.equal('--- Meshd Clusters\n+++ Proxy Clusters\n@@ -1 +1 @@\n-the config dump has no envoy.admin.v3.ClustersConfigDump\n+{}\n');
    expect(listeners).to.equal('Listeners Match');
    expect(routesPart.split('\n').slice(0, 3)).to.deep.equal(["Routes Don't Match (RDS last loaded at Tue, 04 Aug 2020 06:22:54 UTC)", '--- Meshd Routes', '+++ Proxy Routes']);
    // Virtual hosts compared sorted: `a` and `b` match, `c` and route 81 are the proxy's extra.
    expect(routesPart.split('\n').filter((l) => /^[-+] /.test(l))).to.deep.equal([
      '+               },',
      '+               {',
      '+                  "name": "c",',
      '+                  "domains": [',
      '+                     "c"',
      '+                  ]',
      '+         }',
      '+      },',
      '+      {',
      '+         "routeConfig": {',
      '+            "@type": "type.googleapis.com/envoy.config.route.v3.RouteConfiguration",',
      '+            "name": "81"',
    ]);
  });

  it('writes times as Go writes time.RFC1123', () => {
    expect(rfc1123(new Date('2020-08-04T06:22:54Z'), 'UTC')).to.equal('Tue, 04 Aug 2020 06:22:54 UTC');
    expect(rfc1123(new Date('2021-01-09T23:05:01Z'), 'UTC')).to.equal('Sat, 09 Jan 2021 23:05:01 UTC');
  });
});

describe('meshd-debug: versions and targets', () => {
  const info = (version: string) => ({ version, revision: 'abc', nodeVersion: 'v20', status: 'Clean', tag: version });

  it('counts proxies per version, sorted, and coalesces daemons of one version', () => {
    expect(proxyVersionSummary([])).to.equal('none');
    expect(proxyVersionSummary([{ ID: 'a', MeshVersion: '1.2' }, { ID: 'b', MeshVersion: '1.10' }, { ID: 'c', MeshVersion: '1.2' }, { ID: 'd', MeshVersion: '' }])).to.equal(
      '1.10 (1 proxies), 1.2 (2 proxies), unknown (1 proxies)',
    );
    const same = renderVersionReport({ clientVersion: info('1.0'), meshVersion: [serverInfo(JSON.stringify({ Component: 'meshd', ID: 'a', Info: info('1.0') }), 'default'), serverInfo(JSON.stringify({ Component: 'meshd', ID: 'b', Info: info('1.0') }), 'default')], dataPlaneVersion: [] }, undefined, true);
    expect(same).to.equal('client version: 1.0\ncontrol plane version: 1.0\ndata plane version: none\n');
    const mixed = renderVersionReport({ clientVersion: info('1.0'), meshVersion: [serverInfo(JSON.stringify({ Component: 'meshd', Info: info('1.0') }), 'default'), serverInfo(JSON.stringify({ Component: 'meshd', Info: info('1.1') }), 'default')] }, undefined, true);
    expect(mixed).to.equal('client version: 1.0\nmeshd version: 1.0\nmeshd version: 1.1\n');
    expect(serverInfo(undefined, 'default').Component).to.equal('MISSING CP ID');
    expect(serverInfo('meshd-x', 'default').Component).to.equal('INVALID CP ID');
  });

  it('lists each proxy once, whichever daemon reported it', () => {
    const response = (ids: string[]) => ({ resources: ids.map((id) => ({ node: { id, metadata: { MESH_VERSION: '1.2' } } })) });
    expect(proxyVersions([response(['b', 'a']), response(['a'])])).to.deep.equal([
      { ID: 'a', MeshVersion: '1.2' },
      { ID: 'b', MeshVersion: '1.2' },
    ]);
  });

  it('reads a pod argument without the orchestrator, and leaves other kinds to it', () => {
    expect(podOfTarget('httpbin-1.foo', 'default')).to.deep.equal({ name: 'httpbin-1', namespace: 'foo' });
    expect(podOfTarget('httpbin-1', 'bar')).to.deep.equal({ name: 'httpbin-1', namespace: 'bar' });
    expect(podOfTarget('pod/a.b.c', 'x')).to.deep.equal({ name: 'a.b', namespace: 'c' });
    expect(podOfTarget('deployment/web.foo', 'x')).to.equal(undefined);
  });
});

describe('meshd-debug: connection security and debug requests', () => {
  it('needs the roots in --cert-dir unless --insecure, and names the missing file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-certdir-'));
    try {
      const identity = await makeServingIdentity(['meshctl.test']);
      fs.writeFileSync(path.join(dir, 'cert-chain.pem'), identity.certPem);
      fs.writeFileSync(path.join(dir, 'key.pem'), identity.keyPem);
      expect(() => channelSecurity({ plaintext: false, insecure: false, certDir: dir })).to.throw(`--cert-dir: cannot read ${path.join(dir, 'root-cert.pem')}: ENOENT`);
      const insecure = channelSecurity({ plaintext: false, insecure: true, certDir: dir, defaultServerName: 'meshd.mesh-system.svc' });
      expect(insecure.options).to.deep.equal({ 'grpc.ssl_target_name_override': 'meshd.mesh-system.svc', 'grpc.default_authority': 'meshd.mesh-system.svc' });
      fs.writeFileSync(path.join(dir, 'root-cert.pem'), identity.caPem);
      expect(channelSecurity({ plaintext: false, insecure: false, certDir: dir, authority: 'meshd.x.svc', defaultServerName: 'meshd.mesh-system.svc' }).options).to.deep.equal({
        'grpc.ssl_target_name_override': 'meshd.x.svc',
        'grpc.default_authority': 'meshd.x.svc',
      });
      expect(channelSecurity({ plaintext: true, insecure: false, certDir: dir, authority: 'x' }).options).to.deep.equal({ 'grpc.default_authority': 'x' });
      // The namespace the debug stream presents is the certificate's, when it names a mesh identity.
      expect(certificateNamespace(dir)).to.equal(undefined);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads the incumbent forms of a debug request and refuses malformed ones', () => {
    const q = parseDebugRequest('mesh.io/debug', ['config_dump?proxyID=a.b']);
    expect([q.name, q.query.get('proxyID'), q.resourceName, q.argument]).to.deep.equal(['config_dump', 'a.b', 'config_dump?proxyID=a.b', undefined]);
    const dump = parseDebugRequest('mesh.io/debug/config_dump', ['a.b']);
    expect([dump.name, dump.argument]).to.deep.equal(['config_dump', 'a.b']);
    const configz = parseDebugRequest('mesh.io/debug/configz', ['?kind=Sidecar']);
    expect([configz.name, configz.query.get('kind'), configz.argument]).to.deep.equal(['configz', 'Sidecar', undefined]);
    expect(parseDebugRequest('mesh.io/debug/syncz', []).resourceName).to.equal('syncz');
    const refused = (type: string, names: string[]) => {
      try {
        parseDebugRequest(type, names);
      } catch (err) {
        expect(err).to.be.instanceOf(XdsDebugError);
        expect((err as XdsDebugError).code).to.equal(grpc.status.INVALID_ARGUMENT);
        return (err as Error).message;
      }
      throw new Error('expected a refusal');
    };
    expect(refused('mesh.io/debug', [])).to.contain('needs the debug type as its resource name');
    expect(refused('mesh.io/debug', ['a', 'b'])).to.contain('names one resource, not 2');
    expect(refused('mesh.io/debug', ['../../etc/passwd'])).to.contain('is not a debug type name');
    expect(refused('mesh.io/debug', ['x'.repeat(5000)])).to.contain('longer than 4096');
  });
});
