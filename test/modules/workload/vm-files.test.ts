import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import { parse } from 'yaml';
import { clusterEnv, groupTemplate, keyValues, namedPorts, vmEnvironment, VmFileInputs, vmFiles } from '../../../src/modules/workload';

const inputs = (over: Partial<VmFileInputs> = {}): VmFileInputs => ({
  group: { name: 'web', namespace: 'vm', labels: { app: 'shop' }, serviceAccount: 'sa', network: '' },
  clusterId: 'c1',
  autoregister: false,
  captureDns: false,
  meshConfig: {},
  trustDomain: 'example.org',
  discoveryAddress: 'meshd.mesh-system.svc:15012',
  ingressIP: '',
  rootCertPem: 'ROOT',
  token: 'TOKEN',
  ...over,
});

describe('workload VM files', () => {
  it('quotes cluster.env values so a shell sourcing it gets them back unchanged', () => {
    const env = { A: `it's "odd" $HOME \`x\``, B: '' };
    const out = execFileSync('/bin/sh', ['-c', `eval "$(cat)"; printf '%s|%s' "$A" "$B"`], { input: clusterEnv(env) }).toString();
    expect(out).to.equal(`${env.A}|`);
  });

  it('takes the instance address from --internalIP, else --externalIP; the network only when the group has one', () => {
    expect(vmEnvironment(inputs({ internalIP: '10.0.0.1', externalIP: '1.2.3.4' })).INSTANCE_IP).to.equal('10.0.0.1');
    expect(vmEnvironment(inputs({ externalIP: '1.2.3.4' })).INSTANCE_IP).to.equal('1.2.3.4');
    expect(vmEnvironment(inputs())).to.not.have.property('INSTANCE_IP');
    expect(vmEnvironment(inputs())).to.deep.equal({
      MESH_METAJSON_LABELS: '{"app":"shop"}',
      MESH_META_CLUSTER_ID: 'c1',
      MESH_META_DNS_CAPTURE: 'false',
      MESH_META_WORKLOAD_NAME: 'web',
      POD_NAMESPACE: 'vm',
    });
  });

  it('keeps the mesh config and adds the discovery address; hosts is empty without a gateway address', () => {
    const files = vmFiles(inputs({ meshConfig: { accessLogFile: '/dev/stdout', defaultConfig: { concurrency: 2, proxyMetadata: { X: '1' } } } }));
    const mesh = parse(files['mesh.yaml']);
    expect(mesh.accessLogFile).to.equal('/dev/stdout');
    expect(mesh.defaultConfig).to.include({ concurrency: 2, discoveryAddress: 'meshd.mesh-system.svc:15012' });
    expect(mesh.defaultConfig.proxyMetadata).to.include({ X: '1', POD_NAMESPACE: 'vm' });
    expect(files.hosts).to.equal('');
    expect(vmFiles(inputs({ ingressIP: '192.0.2.1' })).hosts).to.equal('192.0.2.1 meshd.mesh-system.svc\n');
  });

  it('parses key=value and name=port flags, refusing empty keys and bad ports', () => {
    expect(keyValues(['a=b=c', 'flag'], 'labels')).to.deep.equal({ a: 'b=c', flag: '' });
    expect(() => keyValues(['=x'], 'labels')).to.throw('--labels "=x": expected key=value');
    expect(namedPorts(['http=80'])).to.deep.equal({ http: 80 });
    for (const bad of ['http=0', 'http=-1', 'http=x', '=80', 'http=65536']) expect(() => namedPorts([bad]), bad).to.throw('expected name=port');
  });

  it('reads a group template, refusing wrong kinds and types with the place named', () => {
    const group = { kind: 'WorkloadGroup', metadata: { name: 'web' }, spec: { metadata: { labels: { app: 'a' } }, template: { labels: { tier: 'b' } } } };
    expect(groupTemplate(group, 'f.yaml', 'ns')).to.deep.equal({ name: 'web', namespace: 'ns', labels: { tier: 'b', app: 'a' }, serviceAccount: 'default', network: '' });
    expect(() => groupTemplate({ kind: 'Pod' }, 'f.yaml')).to.throw('f.yaml: not a WorkloadGroup');
    expect(() => groupTemplate(null, 'f.yaml')).to.throw('f.yaml: not a WorkloadGroup');
    expect(() => groupTemplate({ ...group, spec: {} }, 'f.yaml')).to.throw('f.yaml: WorkloadGroup default/web has no spec.template');
    expect(() => groupTemplate({ ...group, spec: { template: { labels: { a: 1 } } } }, 'f.yaml')).to.throw('f.yaml: spec.template.labels must map names to strings');
    expect(() => groupTemplate({ ...group, spec: { template: { serviceAccount: 3 } } }, 'f.yaml')).to.throw('f.yaml: spec.template.serviceAccount must be a name');
  });
});
