import { expect } from 'chai';
import { decodeDeltaDiscoveryRequest, decodeDiscoveryRequest } from '../../../src/modules/envoy/discovery-requests';
import { messageType } from '../../../src/modules/envoy/protos';
import { internedSetOf, internNameSet } from '../../../src/modules/xds/interning';

/**
 * Discovery requests are decoded field by field, with repeated names recognized by their
 * bytes. What comes out must be what protobufjs reads from the same bytes, whatever the
 * field order, and the same bytes must give the same shared list.
 */
const DELTA = 'envoy.service.discovery.v3.DeltaDiscoveryRequest';
const SOTW = 'envoy.service.discovery.v3.DiscoveryRequest';

function encode(typeName: string, object: Record<string, unknown>): Buffer {
  const type = messageType(typeName);
  return Buffer.from(type.encode(type.fromObject(object)).finish());
}

/** What protobufjs reads, in the decoder's shape (absent messages left out). */
function reference(typeName: string, bytes: Buffer): Record<string, unknown> {
  const type = messageType(typeName);
  const out = type.toObject(type.decode(bytes), { json: true, enums: String, longs: String, defaults: true, arrays: true, objects: true, oneofs: true });
  for (const [k, v] of Object.entries(out)) if (v === null) delete out[k];
  delete out.resource_locators;
  delete out.resource_locators_subscribe;
  delete out.resource_locators_unsubscribe;
  return out;
}

const names = (n: number, prefix = 'outbound|8080||svc') => Array.from({ length: n }, (_, i) => `${prefix}-${i}.ns-${i % 10}.svc.cluster.local`);
const node = {
  id: 'sidecar~10.0.0.1~a.ns~ns.svc.cluster.local',
  cluster: 'a.ns',
  metadata: { fields: { NAMESPACE: { string_value: 'ns' }, LABELS: { struct_value: { fields: { app: { string_value: 'a' } } } } } },
};

describe('discovery request decoding', () => {
  it('reads a delta request as protobufjs does: node, names, initial versions, nonce and error', () => {
    const bytes = encode(DELTA, {
      node,
      type_url: 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
      resource_names_subscribe: names(300),
      resource_names_unsubscribe: ['gone-1', 'gone-2'],
      initial_resource_versions: { a: '1', 'b|c': 'v2' },
      response_nonce: '7-3',
      error_detail: { code: 3, message: 'bad cluster' },
      resource_locators_subscribe: [{ name: 'ignored' }],
    });
    expect(JSON.parse(JSON.stringify(decodeDeltaDiscoveryRequest(bytes)))).to.deep.equal(reference(DELTA, bytes));
  });

  it('reads a state-of-the-world request as protobufjs does', () => {
    const bytes = encode(SOTW, { version_info: '12', node, resource_names: names(50), type_url: 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration', response_nonce: 'n', error_detail: { code: 13, message: 'x' } });
    expect(JSON.parse(JSON.stringify(decodeDiscoveryRequest(bytes)))).to.deep.equal(reference(SOTW, bytes));
  });

  it('gives empty lists and no node or error for a bare request', () => {
    const req = decodeDeltaDiscoveryRequest(Buffer.alloc(0));
    expect(req).to.deep.equal({ type_url: '', resource_names_subscribe: [], resource_names_unsubscribe: [], initial_resource_versions: {}, response_nonce: '' });
    expect(decodeDiscoveryRequest(Buffer.alloc(0)).resource_names).to.deep.equal([]);
  });

  it('reads names interleaved with other fields, unknown fields and non-ASCII names in order', () => {
    // Fields out of the usual order: names, then the type, then more names.
    const parts = [
      encode(DELTA, { resource_names_subscribe: names(40, 'first') }),
      encode(DELTA, { type_url: 't', response_nonce: 'n' }),
      Buffer.from([(15 << 3) | 0, 5]), // an unknown varint field
      encode(DELTA, { resource_names_subscribe: ['ünïcødé', ...names(40, 'second')] }),
    ];
    const bytes = Buffer.concat(parts);
    const req = decodeDeltaDiscoveryRequest(bytes);
    expect(req.resource_names_subscribe).to.deep.equal([...names(40, 'first'), 'ünïcødé', ...names(40, 'second')]);
    expect(req.type_url).to.equal('t');
    expect(JSON.parse(JSON.stringify(req))).to.deep.equal(reference(DELTA, bytes));
  });

  it('hands the same frozen list to every request with the same names, and a new one when a byte differs', () => {
    const list = names(500);
    const a = decodeDeltaDiscoveryRequest(encode(DELTA, { type_url: 't', resource_names_subscribe: list }));
    const b = decodeDeltaDiscoveryRequest(encode(DELTA, { type_url: 't', resource_names_subscribe: list, response_nonce: 'other' }));
    expect(a.resource_names_subscribe).to.equal(b.resource_names_subscribe);
    expect(Object.isFrozen(a.resource_names_subscribe)).to.equal(true);
    const changed = [...list];
    changed[250] = changed[250].replace('svc-250', 'svc-25x'); // same length, one byte apart
    const c = decodeDeltaDiscoveryRequest(encode(DELTA, { type_url: 't', resource_names_subscribe: changed }));
    expect(c.resource_names_subscribe).to.not.equal(a.resource_names_subscribe);
    expect(c.resource_names_subscribe).to.deep.equal(changed);
    expect(a.resource_names_subscribe).to.deep.equal(list);
  });

  it('turns a shared list into its interned set once, and knows that set again from the list', () => {
    const list = decodeDiscoveryRequest(encode(SOTW, { resource_names: names(200, 'interned') })).resource_names;
    const set = internNameSet(list);
    expect(internedSetOf(list)).to.equal(set);
    // Another order of the same names is the same subscription.
    expect(internNameSet([...list].reverse())).to.equal(set);
    expect([...set].sort()).to.deep.equal([...list].sort());
  });

  it('refuses truncated input, as protobufjs does', () => {
    const bytes = encode(DELTA, { type_url: 't', resource_names_subscribe: names(100) });
    expect(() => decodeDeltaDiscoveryRequest(bytes.subarray(0, bytes.length - 3))).to.throw(RangeError);
    expect(() => decodeDiscoveryRequest(Buffer.from([(3 << 3) | 2, 200, 1, 65]))).to.throw(RangeError);
    // A map entry claiming more bytes than the request has.
    expect(() => decodeDeltaDiscoveryRequest(Buffer.from([(5 << 3) | 2, 4, (1 << 3) | 2, 9, 65]))).to.throw(RangeError);
  });
});
