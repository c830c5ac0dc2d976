import { expect } from 'chai';
import { Settings } from '../../../src/modules/settings';
import { runCli } from '../../helpers/run-cli';

describe('settings: the variables programs read from their platform', () => {
  it('MESH_META_* is a declared family: each variable by the name after the prefix, for the agent only', () => {
    const env = { MESH_META_CLUSTER_ID: 'east', MESH_META_DNS_CAPTURE: 'true', MESH_META_: 'no name', OTHER: 'x' };
    const agent = new Settings('pilot-agent', env);
    expect(agent.family('MESH_META_')).to.deep.equal({ CLUSTER_ID: 'east', DNS_CAPTURE: 'true' });
    expect(new Settings('pilot-discovery', env).family('MESH_META_')).to.deep.equal({});
    expect(() => agent.family('NOPE_')).to.throw('unknown setting family NOPE_*');
  });

  it("the agent reads POD_NAME and POD_NAMESPACE as its workload's, with its own defaults", () => {
    expect(new Settings('pilot-agent', {}).string('POD_NAMESPACE')).to.equal('default');
    expect(new Settings('pilot-agent', {}).string('POD_NAME')).to.equal('workload');
    expect(new Settings('pilot-discovery', {}).string('POD_NAMESPACE')).to.equal('mesh-system');
    expect(new Settings('pilot-agent', { POD_NAMESPACE: 'shop' }).string('POD_NAMESPACE')).to.equal('shop');
  });

  it('the CNI plug-in reads only its CNI_* variables', () => {
    const env = { CNI_COMMAND: 'ADD', CNI_NETNS: '/var/run/netns/x', PILOT_DEBOUNCE_AFTER: 'not a duration' };
    const plugin = new Settings('mesh-cni', env);
    expect(plugin.string('CNI_COMMAND')).to.equal('ADD');
    expect(plugin.string('CNI_NETNS')).to.equal('/var/run/netns/x');
    // A daemon setting in the runtime's environment is none of the plug-in's business.
    expect(plugin.resolve('PILOT_DEBOUNCE_AFTER').fromEnvironment).to.equal(false);
  });

  it('meshctl x config list marks the mesh-own and platform variables, and lists the families', async () => {
    const json = await runCli('meshctl', ['x', 'config', 'list', '-o', 'json']);
    expect(json.code).to.equal(0);
    const rows = JSON.parse(json.stdout) as { name: string; ours: boolean; programs: string[] }[];
    const row = (name: string) => rows.find((r) => r.name === name);
    expect(row('PROXY_CONFIG')).to.include({ ours: true });
    expect(row('CNI_COMMAND')).to.deep.include({ ours: true, programs: ['mesh-cni'] });
    expect(row('MESH_META_*')).to.deep.include({ ours: true, programs: ['pilot-agent'] });
    expect(row('POD_NAMESPACE')!.programs).to.include('pilot-agent');
    expect(row('PILOT_DEBOUNCE_AFTER')).to.include({ ours: false });
    const table = await runCli('meshctl', ['x', 'config', 'list']);
    expect(table.stdout).to.match(/^MESH_META_\*\s+S\s+-\s+each `MESH_META_<NAME>` variable/m);
  });
});
