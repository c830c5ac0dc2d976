import { expect } from 'chai';
import { parse, parseAllDocuments } from 'yaml';
import { allowedInsecureOptions, insecureOptionsOf, remoteClustersOf } from '../../../src/modules/registry/orch/remote-secret';
import { defaultSecretName, orchConfigText, remoteSecret, RemoteSecretSpec } from '../../../src/modules/remote-secret';

const spec = (over: Partial<RemoteSecretSpec> = {}): RemoteSecretSpec => ({
  clusterName: 'east',
  secretName: 'mesh-remote-secret-east',
  namespace: 'mesh-system',
  type: 'remote',
  server: 'https://east.example:6443',
  caData: Buffer.from('CA').toString('base64'),
  auth: { kind: 'bearer-token', token: 'abc' },
  ...over,
});

describe('remote secret documents', () => {
  it('is read by the daemon as the cluster under its name, with an acceptable config', () => {
    const secret = remoteSecret(spec()) as { stringData: Record<string, string> };
    // The API server folds stringData into data (base64), which is what the daemon reads.
    const data = Object.fromEntries(Object.entries(secret.stringData).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
    const entries = remoteClustersOf({ data });
    expect(entries.map((e) => e.clusterId)).to.deep.equal(['east']);
    expect(insecureOptionsOf(entries[0].kubeconfig, allowedInsecureOptions(''))).to.deep.equal([]);
    const config = parse(entries[0].kubeconfig);
    expect(config.users).to.deep.equal([{ name: 'east', user: { token: 'abc' } }]);
    expect(config.clusters[0].cluster).to.deep.equal({ server: 'https://east.example:6443', 'certificate-authority-data': Buffer.from('CA').toString('base64') });
  });

  it('puts a plugin in an auth-provider entry, which the daemon refuses unless allowed by name', () => {
    const text = orchConfigText(spec({ auth: { kind: 'plugin', name: 'gcp', config: { a: 'b' } } }));
    expect(parse(text).users[0].user).to.deep.equal({ 'auth-provider': { name: 'gcp', config: { a: 'b' } } });
    expect(insecureOptionsOf(text, allowedInsecureOptions(''))).to.deep.equal(['auth-provider gcp (user east)']);
    expect(insecureOptionsOf(text, allowedInsecureOptions('gcp'))).to.deep.equal([]);
  });

  it('omits the CA when the config has none, labels config secrets apart, and makes names DNS-safe', () => {
    expect(parse(orchConfigText(spec({ caData: '' }))).clusters[0].cluster).to.deep.equal({ server: 'https://east.example:6443' });
    expect((remoteSecret(spec({ type: 'config' })) as { metadata: { labels: object } }).metadata.labels).to.deep.equal({ 'mesh/config': 'true' });
    expect(defaultSecretName('East_1.a')).to.equal('mesh-remote-secret-east-1.a');
    expect(parseAllDocuments(orchConfigText(spec()))).to.have.length(1);
  });
});
