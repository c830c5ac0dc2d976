import { expect } from 'chai';
import { checkRegistrationIdentity, entryForProxy, entryNameFor, RegistrationRefused, WorkloadGroupObject } from '../../../src/modules/discovery/autoregistration';
import { parseProxy } from '../../../src/modules/model/proxy';

const group: WorkloadGroupObject = {
  apiVersion: 'networking.mesh.io/v1',
  kind: 'WorkloadGroup',
  metadata: { name: 'web', namespace: 'vm', uid: 'u-1' },
  spec: { template: { serviceAccount: 'web-sa', network: '', labels: { tier: 'front' } } },
};
const proxy = (ip: string, meta: Record<string, unknown> = {}) => parseProxy(`sidecar~${ip}~web.vm~vm.svc.cluster.local`, { NAMESPACE: 'vm', INSTANCE_IPS: ip, ...meta });

describe('auto-registration: the entry a proxy gets and who may get one', () => {
  it('names the entry after the group, the address and the network, in characters a name can hold', () => {
    expect(entryNameFor('web', proxy('10.0.0.1'))).to.equal('web-10.0.0.1');
    expect(entryNameFor('web', proxy('fd00::1', { NETWORK: 'Net_2' }))).to.equal('web-fd00--1-net-2');
  });

  it('takes the network and locality from the proxy where the template leaves them open', () => {
    const e = entryForProxy(group, proxy('10.0.0.1', { NETWORK: 'n2', LOCALITY: 'r/z', LABELS: { tier: 'back', v: '1' } }), 'meshd-a', new Date(0));
    expect(e.spec).to.deep.include({ address: '10.0.0.1', network: 'n2', locality: 'r/z', serviceAccount: 'web-sa' });
    expect(e.spec.labels, "the proxy's labels win over the template's").to.deep.equal({ tier: 'back', v: '1' });
    expect(e.metadata.annotations!['mesh.io/connectedAt']).to.equal('1970-01-01T00:00:00.000Z');
  });

  it('lets a proxy register only as the identity the group gives, and only in its namespace', () => {
    const p = proxy('10.0.0.1');
    expect(() => checkRegistrationIdentity(group, p, ['spiffe://td1/ns/vm/sa/web-sa'], true)).to.not.throw();
    expect(() => checkRegistrationIdentity(group, p, ['spiffe://td1/ns/vm/sa/other'], true)).to.throw(RegistrationRefused, /not as service account vm\/web-sa/);
    expect(() => checkRegistrationIdentity(group, p, ['spiffe://td1/ns/evil/sa/web-sa'], true)).to.throw(RegistrationRefused);
    expect(() => checkRegistrationIdentity(group, p, [], true)).to.throw(RegistrationRefused, /no authenticated identity/);
    expect(() => checkRegistrationIdentity(group, p, [], false)).to.not.throw();
    const elsewhere = parseProxy('sidecar~10.0.0.1~web.other~other.svc.cluster.local', { NAMESPACE: 'other' });
    expect(() => checkRegistrationIdentity(group, elsewhere, [], false)).to.throw(RegistrationRefused, /namespace other, not the group's/);
  });
});
