import { expect } from 'chai';
import { CORS_TYPE, FAULT_TYPE, ROUTER_TYPE } from '../../../src/modules/envoy/well-known';
import { CORE_HTTP_FILTERS } from '../../../src/modules/proxy/core-filters';
import { acceptOnlyNetworkFilter } from '../../../src/modules/proxy/filters/accept-only';
import { passRequest } from '../../../src/modules/proxy/http/filter-api';
import { FilterRegistry } from '../../../src/modules/proxy/http/filter-registry';
import { TestContext } from './filters/support';

const ROUTER = { name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } };
const UNKNOWN = 'type.googleapis.com/example.Unknown';

describe('built-in proxy filter registry: filters come from the contributed factories only', () => {
  it('NACKs an unknown filter that is not optional, naming the filter and its type URL', () => {
    const registry = new FilterRegistry(CORE_HTTP_FILTERS, []);
    expect(() => registry.httpFilters([{ name: 'example.thing', typed_config: { '@type': UNKNOWN } }, ROUTER], new TestContext())).to.throw(
      `http filter example.thing: ${UNKNOWN} is not supported by the built-in proxy`,
    );
  });

  it('names the type URL of a typed_config whose proto this process does not know (a raw Any)', () => {
    const registry = new FilterRegistry([], []);
    const raw = { type_url: UNKNOWN, value: 'CgFB' };
    expect(() => registry.httpFilters([{ name: 'example.thing', typed_config: raw }, ROUTER], new TestContext())).to.throw(`example.thing: ${UNKNOWN}`);
    expect(() => registry.networkFilter({ name: 'example.net', typed_config: raw }, new TestContext())).to.throw(`network filter example.net: ${UNKNOWN}`);
  });

  it('skips an unknown optional filter and says so once per type URL, not on every listener update', () => {
    const registry = new FilterRegistry([], []);
    const context = new TestContext();
    const list = [{ name: 'example.thing', typed_config: { '@type': UNKNOWN }, is_optional: true }, ROUTER];
    for (let i = 0; i < 3; i++) expect(registry.httpFilters(list, context)).to.deep.equal([]);
    expect(context.logs.filter((l) => l.includes(UNKNOWN))).to.have.length(1);
    expect(context.logs[0]).to.match(/^info: http filter example.thing .* is optional and not supported by the built-in proxy: skipped$/);
  });

  it('accepts CORS and fault from its core, with nothing to do per request', () => {
    const registry = new FilterRegistry(CORE_HTTP_FILTERS, []);
    const filters = registry.httpFilters(
      [{ name: 'envoy.filters.http.cors', typed_config: { '@type': CORS_TYPE } }, { name: 'envoy.filters.http.fault', typed_config: { '@type': FAULT_TYPE } }, ROUTER],
      new TestContext(),
    );
    expect(filters.map((f) => f.name)).to.deep.equal(['envoy.filters.http.cors', 'envoy.filters.http.fault']);
    expect(filters.every((f) => f.onRequest === passRequest && f.onResponse === undefined)).to.equal(true);
  });

  it('NACKs an unknown network filter (network filters have no is_optional) and runs a known one', () => {
    const registry = new FilterRegistry([], [acceptOnlyNetworkFilter(UNKNOWN)]);
    expect(registry.networkFilter({ name: 'n', typed_config: { '@type': UNKNOWN } }, new TestContext()).onConnection({ remoteAddress: '', remotePort: 0, localAddress: '', localPort: 0 })).to.equal('continue');
    expect(() => registry.networkFilter({ name: 'm', typed_config: { '@type': `${UNKNOWN}2` } }, new TestContext())).to.throw(`network filter m: ${UNKNOWN}2 is not supported`);
  });
});
