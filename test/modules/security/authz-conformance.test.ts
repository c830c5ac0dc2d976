import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { EnvoyFilter, FilterChainContext } from '../../../src/modules/model/generator';
import { ServicePort } from '../../../src/modules/registry/model';
import { AuthzHttpFilterContributor, AuthzNetworkFilterContributor } from '../../../src/modules/security/authz';
import { toProtoJson } from '../../helpers/proto-json';
import { proxyOf, pushOf } from '../../helpers/push';
import { REPO_ROOT } from '../../helpers/run-cli';

/**
 * The incumbent's authorization cases (test/fixtures/conformance/authz, README "authz"): a
 * sidecar in namespace foo labelled app=httpbin, version=v1, trust domain cluster.local, root
 * namespace mesh-system. Each `<case>-in.yaml` goes through our config parsing and validation;
 * the filters we contribute to an inbound chain, encoded and written as proto3 JSON, must equal
 * `<case>-out.yaml` (or `-out1.yaml`, `-out2.yaml`... in chain order).
 */
const DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'conformance', 'authz');
const HTTP_FILTER_TYPE = 'envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter';
const NETWORK_FILTER_TYPE = 'envoy.config.listener.v3.Filter';

function casesIn(kind: 'http' | 'tcp'): { name: string; input: string; outputs: string[] }[] {
  const files = fs.readdirSync(path.join(DIR, kind)).sort();
  return files
    .filter((f) => f.endsWith('-in.yaml'))
    .map((f) => {
      const name = f.slice(0, -'-in.yaml'.length);
      const outputs = files
        .filter((o) => o === `${name}-out.yaml` || new RegExp(`^${name}-out\\d+\\.yaml$`).test(o))
        .sort((a, b) => outIndex(a) - outIndex(b));
      return { name, input: path.join(DIR, kind, f), outputs: outputs.map((o) => path.join(DIR, kind, o)) };
    });
}

const outIndex = (file: string) => Number(/-out(\d*)\.yaml$/.exec(file)?.[1] || 0);

function expectedFilters(files: string[]): unknown[] {
  return files.map((f) => {
    const docs = parseAllDocuments(fs.readFileSync(f, 'utf8'));
    const list = Array.isArray(docs) ? docs : [docs];
    expect(list, f).to.have.length(1);
    return list[0].toJS();
  });
}

function inboundChain(yaml: string, protocol: ServicePort['protocol']): FilterChainContext {
  return {
    push: pushOf(yaml),
    proxy: proxyOf('10.0.0.1', 'foo', { app: 'httpbin', version: 'v1' }),
    direction: 'inbound',
    port: { name: 'p', number: 8000, protocol, targetPort: 8000 },
  };
}

describe('authorization conformance (incumbent cases)', () => {
  it('has every case of the shared set', () => {
    const count = (kind: 'http' | 'tcp') => fs.readdirSync(path.join(DIR, kind)).filter((f) => f.endsWith('.yaml')).length;
    expect([count('http'), count('tcp')]).to.deep.equal([21, 8]);
  });

  describe('HTTP chains', () => {
    for (const c of casesIn('http')) {
      it(c.name, () => {
        const filters = new AuthzHttpFilterContributor({ trustDomain: 'cluster.local' }).httpFilters(inboundChain(fs.readFileSync(c.input, 'utf8'), 'HTTP'));
        const actual = filters.map((f: EnvoyFilter) => toProtoJson(HTTP_FILTER_TYPE, f));
        expect(actual).to.deep.equal(expectedFilters(c.outputs));
      });
    }
  });

  describe('TCP chains', () => {
    for (const c of casesIn('tcp')) {
      it(c.name, () => {
        const result = new AuthzNetworkFilterContributor({ trustDomain: 'cluster.local' }).networkFilters(inboundChain(fs.readFileSync(c.input, 'utf8'), 'TCP'));
        const actual = (result.before ?? []).map((f) => toProtoJson(NETWORK_FILTER_TYPE, f));
        expect(actual).to.deep.equal(expectedFilters(c.outputs));
      });
    }
  });
});
