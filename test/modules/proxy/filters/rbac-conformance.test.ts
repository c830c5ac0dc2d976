import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as protobuf from 'protobufjs';
import { parse } from 'yaml';
import { HTTP_RBAC_TYPE_URL, NETWORK_RBAC_TYPE_URL, rbacHttpFilterFactory, rbacNetworkFilterFactory } from '../../../../src/modules/proxy/filters';
import type { ConnectionInfo, HttpFilter, NetworkFilter } from '../../../../src/modules/proxy/http/filter-api';
import { REPO_ROOT } from '../../../helpers/run-cli';
import { decoded, DEFAULT_CONNECTION, request, RequestSpec, run, TestContext } from './support';

/**
 * The reference implementation's generated RBAC filters (test/fixtures/conformance/authz/*-out*.yaml)
 * are what the daemon sends: every one must build, and a few are checked for their decisions.
 */
const DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'conformance', 'authz');
const URI_TEMPLATE = 'type.googleapis.com/envoy.extensions.path.match.uri_template.v3.UriTemplateMatchConfig';

const snake = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * proto3 JSON (camelCase) → the snake_case form encodeMessage takes. Policy names are map keys,
 * not fields; wrapper values (`prefixLen: 32`) become `{ value }`. URI template Anys become
 * bytes, since the shared proto set lacks their type.
 */
function toSnake(value: unknown, mapKeys = false): unknown {
  if (Array.isArray(value)) return value.map((v) => toSnake(v));
  if (typeof value !== 'object' || value === null) return value;
  const object = value as Record<string, unknown>;
  if (object['@type'] === URI_TEMPLATE) {
    return { type_url: URI_TEMPLATE, value: Buffer.from(protobuf.Writer.create().uint32(10).string(String(object.pathTemplate)).finish()) };
  }
  return Object.fromEntries(
    Object.entries(object).map(([k, v]) => {
      if (!mapKeys && k === 'prefixLen') return ['prefix_len', { value: v }];
      return [mapKeys || k === '@type' ? k : snake(k), toSnake(v, !mapKeys && k === 'policies')];
    }),
  );
}

interface Fixture {
  name: string;
  typedConfig: Record<string, unknown>;
}

function load(file: string): Fixture {
  return parse(fs.readFileSync(path.join(DIR, file), 'utf8')) as Fixture;
}

function config(fixture: Fixture, typeUrl: string): Record<string, unknown> {
  const { '@type': type, ...rest } = toSnake(fixture.typedConfig) as Record<string, unknown>;
  expect(type).to.equal(typeUrl);
  return decoded(typeUrl, rest);
}

const httpFilter = (file: string): HttpFilter => rbacHttpFilterFactory.create('envoy.filters.http.rbac', config(load(file), HTTP_RBAC_TYPE_URL), new TestContext());
const networkFilter = (file: string): NetworkFilter =>
  rbacNetworkFilterFactory.create('envoy.filters.network.rbac', config(load(file), NETWORK_RBAC_TYPE_URL), new TestContext());

async function httpStatus(filters: HttpFilter[], spec: RequestSpec): Promise<number> {
  const outcome = await run(filters, request(spec));
  return outcome.kind === 'continue' ? 200 : outcome.status;
}

const peer = (principal?: string): RequestSpec => ({ connection: { peerPrincipal: principal } });

describe('RBAC filters from the reference conformance outputs', () => {
  const files = fs.existsSync(DIR)
    ? fs.readdirSync(DIR, { recursive: true, encoding: 'utf8' }).filter((f) => /-out\d*\.yaml$/.test(f)).sort()
    : [];

  for (const file of files) {
    it(`builds ${file}`, () => {
      const fixture = load(file);
      if (fixture.name === 'envoy.filters.http.rbac') expect(httpFilter(file)).to.have.property('onRequest');
      else expect(networkFilter(file)).to.have.property('onConnection');
    });
  }

  it('deny-and-allow: the DENY filter, then the ALLOW filter', async () => {
    const chain = [httpFilter('http/deny-and-allow-out1.yaml'), httpFilter('http/deny-and-allow-out2.yaml')];
    expect(await httpStatus(chain, peer('spiffe://allow'))).to.equal(200);
    expect(await httpStatus(chain, peer('spiffe://deny'))).to.equal(403);
    expect(await httpStatus(chain, peer('spiffe://other'))).to.equal(403);
    expect(await httpStatus(chain, peer())).to.equal(403);
  });

  it('trust-domains: trusted domains pass, the excluded ones do not', async () => {
    const filter = [httpFilter('http/trust-domains-out.yaml')];
    expect(await httpStatus(filter, peer('spiffe://cluster.local/ns/foo/sa/a'))).to.equal(200);
    expect(await httpStatus(filter, peer('spiffe://bad.example/ns/foo/sa/a'))).to.equal(403);
    expect(await httpStatus(filter, peer('spiffe://untrusted/ns/foo/sa/a'))).to.equal(403);
  });

  it('allow-nil-rule and deny-empty-rule deny everything; audit-full-rule logs everything', async () => {
    expect(await httpStatus([httpFilter('http/allow-nil-rule-out.yaml')], peer('spiffe://x'))).to.equal(403);
    expect(await httpStatus([httpFilter('http/deny-empty-rule-out.yaml')], {})).to.equal(403);
    const audited = request();
    expect((await httpFilter('http/audit-full-rule-out.yaml').onRequest(audited)).kind).to.equal('continue');
    expect(audited.metadata['envoy.common']).to.deep.equal({ access_log_hint: true });
  });

  it('allow-path: the uri templates of the fixture compile and take part in the decision', async () => {
    // The fixture's notPaths include "*" (regex .+), so every path is excluded.
    expect(await httpStatus([httpFilter('http/allow-path-out.yaml')], { path: '/path/template/x' })).to.equal(403);
  });

  it('tcp: a policy with HTTP-only rules becomes "no policy" (close all); port and principal rules apply', () => {
    const conn = (o: Partial<ConnectionInfo>): ConnectionInfo => ({ ...DEFAULT_CONNECTION, ...o });
    expect(networkFilter('tcp/allow-only-http-out.yaml').onConnection(conn({ peerPrincipal: 'spiffe://x/ns/ns-1/sa/a' }))).to.equal('close');
    const both = networkFilter('tcp/allow-both-http-tcp-out.yaml');
    expect(both.onConnection(conn({ localPort: 80, peerPrincipal: 'spiffe://cluster.local/ns/ns-1/sa/a' }))).to.equal('continue');
    expect(both.onConnection(conn({ localPort: 81, peerPrincipal: 'spiffe://cluster.local/ns/ns-1/sa/a' }))).to.equal('close');
    expect(both.onConnection(conn({ localPort: 80, peerPrincipal: 'spiffe://cluster.local/ns/ns-2/sa/a' }))).to.equal('close');
  });
});
