import { expect } from 'chai';
import { createContainer } from '../../../src/container';
import { Agent, AgentFlags, AgentFlagsToken, agentOptions } from '../../../src/modules/agent';
import { NodeIdentityError } from '../../../src/modules/agent/node-identity';
import { ProxyConfigError } from '../../../src/modules/agent/proxy-config';
import { CommandScope } from '../../../src/modules/cli/command-scope';
import { Logging } from '../../../src/modules/logging';
import { Settings } from '../../../src/modules/settings';
import { UserError } from '../../../src/modules/shared/user-error';
import { REPO_ROOT } from '../../helpers/run-cli';

const FLAGS: AgentFlags = {
  meshConfig: '/nonexistent/mesh',
  domain: '',
  serviceCluster: 'shop.foo',
  outlierLogPath: '',
  templateFile: '',
  proxyLogLevel: 'warning',
  proxyComponentLogLevel: '',
  concurrency: 0,
};
const PROXY_CONFIG = JSON.stringify({ controlPlaneAuthPolicy: 'NONE', interceptionMode: 'NONE', binaryPath: '/nonexistent/envoy', drainDuration: '7s' });

describe('the agent as a service: options from settings and flags', () => {
  it('reads its node, ProxyConfig and drain from the settings, not the process environment', () => {
    const settings = new Settings('pilot-agent', {
      PROXY_CONFIG,
      INSTANCE_IP: '127.0.0.61',
      POD_NAME: 'shop-1',
      POD_NAMESPACE: 'foo',
      MESH_METAJSON_LABELS: '{"app":"shop"}',
      MESH_META_CLUSTER_ID: 'east',
      MINIMUM_DRAIN_DURATION: '2s',
    });
    const options = agentOptions(settings, FLAGS, new Logging('pilot-agent').scope('default'));
    expect(options.node.id).to.equal('sidecar~127.0.0.61~shop-1.foo~foo.svc.cluster.local');
    expect(options.node.cluster).to.equal('shop.foo');
    expect(options.node.metadata).to.include({ CLUSTER_ID: 'east', NAMESPACE: 'foo', INSTANCE_IPS: '127.0.0.61', INTERCEPTION_MODE: 'NONE', NAME: 'shop-1' });
    expect(options.node.metadata.LABELS).to.deep.equal({ app: 'shop' });
    expect(options.proxyConfig.binaryPath).to.equal('/nonexistent/envoy');
    expect(options.drain).to.deep.equal({ minimumMs: 2000, exitOnZeroActiveConnections: false, maxMs: 7000 });
  });

  it('takes the workload defaults for POD_NAME and POD_NAMESPACE', () => {
    const options = agentOptions(new Settings('pilot-agent', { PROXY_CONFIG, INSTANCE_IP: '127.0.0.61' }), FLAGS, new Logging('pilot-agent').scope('default'));
    expect(options.node.id).to.equal('sidecar~127.0.0.61~workload.default~default.svc.cluster.local');
  });

  it('is resolved with the command flags bound; what the user must fix is a UserError', () => {
    const resolve = (env: Record<string, string>) => {
      const { container } = createContainer({ program: 'pilot-agent', env, cwd: REPO_ROOT });
      return container.get<CommandScope>(CommandScope).resolve(Agent, [[AgentFlagsToken, FLAGS]]);
    };
    expect(resolve({ PROXY_CONFIG, INSTANCE_IP: '127.0.0.61' })).to.be.instanceOf(Agent);
    const errorOf = (env: Record<string, string>) => {
      try {
        resolve(env);
      } catch (err) {
        return err;
      }
      throw new Error('resolved');
    };
    const noIp = errorOf({ PROXY_CONFIG });
    expect(noIp).to.be.instanceOf(NodeIdentityError).and.instanceOf(UserError);
    expect((noIp as UserError).message).to.match(/^INSTANCE_IP is not set/);
    const badConfig = errorOf({ PROXY_CONFIG: '{"proxyAdminPort": "x"}', INSTANCE_IP: '127.0.0.61' });
    expect(badConfig).to.be.instanceOf(ProxyConfigError).and.instanceOf(UserError);
    expect((badConfig as UserError).exitCode).to.equal(1);
  });
});
