import { expect } from 'chai';
import { pushOf } from '../../helpers/push';

/**
 * Which VirtualService routes a host, as seen from a namespace: the first visible mesh
 * VirtualService naming the host exactly, else the first whose wildcard host covers it, in
 * precedence order (own namespace first, then other namespaces by name, each by resource name).
 */
function vs(namespace: string, name: string, hosts: string[], more = ''): string {
  return `
---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: { name: ${name}, namespace: ${namespace} }
spec:
  hosts: ${JSON.stringify(hosts)}${more}
  http: [{ route: [{ destination: { host: backend.shop.svc.cluster.local } }] }]
`;
}

const nameOf = (found: { metadata: { namespace: string; name: string } } | undefined) => (found ? `${found.metadata.namespace}/${found.metadata.name}` : undefined);

describe('VirtualService lookup by host', () => {
  const push = pushOf(
    [
      vs('aaa', 'wild-first', ['*.shop.svc.cluster.local']),
      vs('aaa', 'zz-wide', ['*.svc.cluster.local']),
      vs('shop', 'cart', ['cart']),
      vs('zzz', 'cart-elsewhere', ['cart.shop.svc.cluster.local']),
      vs('bbb', 'gateway-only', ['pay.shop.svc.cluster.local'], '\n  gateways: [ingress]'),
      vs('ccc', 'private', ['pay.shop.svc.cluster.local'], '\n  exportTo: ["."]'),
    ].join(''),
  );

  it('prefers a VirtualService naming the host over an earlier wildcard one, and the viewer namespace first', () => {
    expect(nameOf(push.virtualServiceFor('cart.shop.svc.cluster.local', 'aaa'))).to.equal('shop/cart');
    expect(nameOf(push.virtualServiceFor('cart.shop.svc.cluster.local', 'zzz'))).to.equal('zzz/cart-elsewhere');
  });

  it('takes the first covering wildcard in precedence order when no VirtualService names the host', () => {
    expect(nameOf(push.virtualServiceFor('orders.shop.svc.cluster.local', 'shop'))).to.equal('aaa/wild-first');
    expect(nameOf(push.virtualServiceFor('orders.other.svc.cluster.local', 'shop'))).to.equal('aaa/zz-wide');
    expect(push.virtualServiceFor('example.com', 'shop')).to.equal(undefined);
  });

  it('skips VirtualServices bound to gateways only, and those not exported to the viewer', () => {
    expect(nameOf(push.virtualServiceFor('pay.shop.svc.cluster.local', 'shop'))).to.equal('aaa/wild-first');
    expect(nameOf(push.virtualServiceFor('pay.shop.svc.cluster.local', 'ccc'))).to.equal('ccc/private');
  });

  it('finds nothing when no VirtualService covers the host', () => {
    const plain = pushOf(vs('shop', 'cart', ['cart']));
    expect(plain.virtualServiceFor('orders.shop.svc.cluster.local', 'shop')).to.equal(undefined);
  });
});
