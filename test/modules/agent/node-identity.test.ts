import { expect } from 'chai';
import { agentNode } from '../../../src/modules/agent/node-identity';
import { Settings } from '../../../src/modules/settings';

describe('agent node identity: the downward-API variables', () => {
  const inputs = { domain: '', serviceCluster: 'shop.foo', interceptionMode: 'NONE' as const };

  it('set but empty counts as unset: the node ID keeps the defaults, not an empty pod or namespace', () => {
    const node = agentNode(new Settings('pilot-agent', { INSTANCE_IP: '10.0.0.7', POD_NAME: '', POD_NAMESPACE: '' }), inputs);
    expect(node.id).to.equal('sidecar~10.0.0.7~workload.default~default.svc.cluster.local');
    const named = agentNode(new Settings('pilot-agent', { INSTANCE_IP: '10.0.0.7', POD_NAME: 'shop-1', POD_NAMESPACE: 'foo' }), inputs);
    expect(named.id).to.equal('sidecar~10.0.0.7~shop-1.foo~foo.svc.cluster.local');
  });

  it('MESH_META_* variables become node metadata by the name after the prefix', () => {
    const node = agentNode(new Settings('pilot-agent', { INSTANCE_IP: '10.0.0.7', MESH_META_CLUSTER_ID: 'east' }), inputs);
    expect(node.metadata).to.include({ CLUSTER_ID: 'east', NAMESPACE: 'default', INSTANCE_IPS: '10.0.0.7' });
  });
});
