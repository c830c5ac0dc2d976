import { expect } from 'chai';
import * as path from 'node:path';
import { REPO_ROOT } from '../../helpers/run-cli';
import { alignColumns, allSummary, clustersTable, hostStatusesTable, listenersTable, readConfigDump, toProtoJson } from '../../../src/modules/proxy-dump';

const ALL_DUMP = path.join(REPO_ROOT, 'test', 'fixtures', 'proxy-config', 'all', 'config_dump.json');

describe('proxy-dump tables', () => {
  const dump = readConfigDump(ALL_DUMP);

  it('aligns columns to the widest cell plus the gap, the last column unpadded', () => {
    expect(alignColumns([['A', 'BB', 'C'], ['aaa', '', 'c']], 2)).to.equal('A    BB  C\naaa      c\n');
  });

  it('filters clusters by FQDN substring, port, subset and direction', () => {
    const rows = (text: string) => text.trimEnd().split('\n').slice(1);
    expect(rows(clustersTable(dump, { fqdn: 'httpbin' }))).to.have.length(1);
    expect(rows(clustersTable(dump, { port: 8000, direction: 'inbound-vip', subset: 'ht' }))).to.have.length(1);
    expect(rows(clustersTable(dump, { direction: 'outbound' }))).to.have.length(0);
  });

  it('lists listeners with their type unless verbose', () => {
    expect(listenersTable(dump, {}, false)).to.equal('ADDRESSES     PORT      TYPE\n              0         HTTP+TCP\n0.0.0.0       15021     HTTP\n');
    expect(listenersTable(dump, { port: 15021 }, true)).to.equal('ADDRESSES     PORT      MATCH     DESTINATION\n0.0.0.0       15021     ALL       Inline Route: /healthz/ready*\n');
    expect(listenersTable(dump, { type: 'tcp' }, false).trimEnd().split('\n')).to.have.length(1);
  });

  it('heads each part of `all` with --with-headers', () => {
    const headers = allSummary(dump, {}, true)
      .split('\n')
      .filter((l) => l.startsWith('------'));
    expect(headers).to.deep.equal(['BOOTSTRAP', 'CLUSTER', 'LISTENER', 'ROUTE', 'SECRET', 'ENDPOINT'].map((k) => `------ ${k} INFO ------`));
  });

  it('prints proto3 JSON names but keeps Struct and map keys', () => {
    expect(toProtoJson({ lb_endpoints: [{ health_status: 'HEALTHY', metadata: { filter_metadata: { 'envoy.lb': { some_key: 1 } } } }], metadata: { MESH_VERSION: '1', build_type: 'x' } })).to.deep.equal({
      lbEndpoints: [{ healthStatus: 'HEALTHY', metadata: { filterMetadata: { 'envoy.lb': { some_key: 1 } } } }],
      metadata: { MESH_VERSION: '1', build_type: 'x' },
    });
  });

  it('lists the endpoints of a saved /clusters answer, sorted by cluster, with their filters', () => {
    const host = (address: string, port: number, failed = false) => ({
      address: { socket_address: { address, port_value: port } },
      health_status: { eds_health_status: 'HEALTHY', failed_outlier_check: failed },
    });
    const data = { cluster_statuses: [{ name: 'outbound|80||b.default.svc.cluster.local', host_statuses: [host('10.0.0.2', 80, true)] }, { name: 'agent', host_statuses: [host('127.0.0.1', 15020)] }] };
    expect(hostStatusesTable(data, {})).to.equal(
      'ENDPOINT            STATUS      OUTLIER CHECK     CLUSTER\n127.0.0.1:15020     HEALTHY     OK                agent\n10.0.0.2:80         HEALTHY     FAILED            outbound|80||b.default.svc.cluster.local\n',
    );
    expect(hostStatusesTable(data, { port: 80 }).trimEnd().split('\n')).to.have.length(2);
    expect(hostStatusesTable(data, { status: 'UNHEALTHY' }).trimEnd().split('\n')).to.have.length(1);
  });
});
