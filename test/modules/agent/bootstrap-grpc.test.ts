import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { agentNode } from '../../../src/modules/agent/node-identity';
import { Settings } from '../../../src/modules/settings';
import { BootstrapError, buildGrpcBootstrap, GrpcBootstrapOptions, validateGrpcBootstrap, writeGrpcBootstrap, xdsSocketPath } from '../../../src/modules/agent/bootstrap';

// The validator @grpc/grpc-js-xds runs on the file named by GRPC_XDS_BOOTSTRAP.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { validateBootstrapConfig } = require('@grpc/grpc-js-xds/build/src/xds-bootstrap');

describe('agent: the gRPC bootstrap (GRPC_XDS_BOOTSTRAP)', () => {
  let dir: string;
  let options: GrpcBootstrapOptions;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-grpc-bootstrap-'));
    const settings = new Settings('pilot-agent', {
      MESH_METAJSON_LABELS: '{"app":"echo"}',
      MESH_META_CLUSTER_ID: 'east',
      INSTANCE_IP: '10.1.2.4',
      POD_NAME: 'echo-1',
      POD_NAMESPACE: 'foo',
    });
    const node = agentNode(settings, { domain: '', serviceCluster: 'echo.foo', interceptionMode: 'NONE' });
    options = { node, xdsSocketPath: xdsSocketPath(path.relative(process.cwd(), path.join(dir, 'etc', 'mesh', 'proxy'))) };
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('points gRPC at the agent xDS socket, as the agent node with GENERATOR grpc, and is accepted by @grpc/grpc-js-xds', () => {
    const file = path.join(dir, 'etc', 'mesh', 'proxy', 'grpc-bootstrap.json');
    const returned = writeGrpcBootstrap(file, options);
    const written = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(written).to.deep.equal(returned);
    expect(written.xds_servers).to.deep.equal([
      { server_uri: `unix://${path.join(dir, 'etc', 'mesh', 'proxy', 'XDS')}`, channel_creds: [{ type: 'insecure' }], server_features: ['xds_v3'] },
    ]);
    expect(written.xds_servers[0].server_uri).to.match(/^unix:\/\/\//);
    expect(written.node.id).to.equal('sidecar~10.1.2.4~echo-1.foo~foo.svc.cluster.local');
    expect(written.node.metadata).to.deep.include({ GENERATOR: 'grpc', NAMESPACE: 'foo', CLUSTER_ID: 'east', LABELS: { app: 'echo' } });
    expect(written.server_listener_resource_name_template).to.equal('xds.mesh.io/grpc/lds/inbound/%s');
    expect(written).to.not.have.property('certificate_providers');

    const accepted = validateBootstrapConfig(written);
    expect(accepted.xdsServers[0].server_uri).to.equal(written.xds_servers[0].server_uri);
    expect(accepted.node.id).to.equal(written.node.id);
    expect(accepted.serverListenerResourceNameTemplate).to.equal('xds.mesh.io/grpc/lds/inbound/%s');
  });

  it('with OUTPUT_CERTS, has a file_watcher certificate provider for the agent certificate files', () => {
    const certs = path.join(dir, 'certs');
    const bootstrap = buildGrpcBootstrap({ ...options, outputCertsDir: certs });
    expect(bootstrap.certificate_providers).to.deep.equal({
      default: {
        plugin_name: 'file_watcher',
        config: {
          certificate_file: path.join(certs, 'cert-chain.pem'),
          private_key_file: path.join(certs, 'key.pem'),
          ca_certificate_file: path.join(certs, 'root-cert.pem'),
          refresh_interval: '900s',
        },
      },
    });
    const accepted = validateBootstrapConfig(JSON.parse(JSON.stringify(bootstrap)));
    expect(accepted.certificateProviders.default).to.deep.equal({
      pluginName: 'file_watcher',
      config: {
        certificateFile: path.join(certs, 'cert-chain.pem'),
        privateKeyFile: path.join(certs, 'key.pem'),
        caCertificateFile: path.join(certs, 'root-cert.pem'),
        refreshIntervalMs: 900_000,
      },
    });
    const relative = buildGrpcBootstrap({ ...options, outputCertsDir: 'etc/certs' });
    expect(relative.certificate_providers!.default.config.certificate_file, 'absolute, whatever the app working directory').to.equal(path.resolve('etc/certs/cert-chain.pem'));
  });

  it('reports what the gRPC validator refuses, naming GRPC_XDS_BOOTSTRAP', () => {
    const bootstrap = buildGrpcBootstrap(options) as unknown as { node: Record<string, unknown> };
    delete bootstrap.node.locality;
    expect(() => validateGrpcBootstrap(bootstrap)).to.throw(BootstrapError, 'GRPC_XDS_BOOTSTRAP: the gRPC bootstrap is not one @grpc/grpc-js-xds accepts: locality field missing in node element');
    const unwritable = path.join(dir, 'file');
    fs.writeFileSync(unwritable, '');
    expect(() => writeGrpcBootstrap(path.join(unwritable, 'grpc-bootstrap.json'), options)).to.throw(BootstrapError, /cannot write the gRPC bootstrap \(GRPC_XDS_BOOTSTRAP\) to .*file\/grpc-bootstrap.json/);
  });
});
