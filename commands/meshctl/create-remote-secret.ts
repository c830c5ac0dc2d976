import { boolFlag, command, mapFlag, MeshCommand, stringFlag } from '../../src/modules/cli';
import { MeshctlOrchFlags } from '../../src/modules/orch-access';
import { createRemoteSecret } from '../../src/modules/remote-secret';
import { withOrchAccess } from './orch-access-scope';

@command({
  program: 'meshctl',
  path: 'create-remote-secret',
  summary: 'Create a secret giving the mesh access to a remote orchestrator API server; pipe it to apply or delete',
  flags: {
    'auth-plugin-config': mapFlag('configuration of the auth plugin, as key=value,... (with --auth-type plugin)'),
    'auth-plugin-name': stringFlag('name of the auth plugin (required with --auth-type plugin)'),
    'auth-type': stringFlag('how the secret authenticates', { options: ['bearer-token', 'plugin'], default: 'bearer-token' }),
    'create-service-account': boolFlag('create the service account the secret needs when it does not exist'),
    manifests: stringFlag('directory of the charts and profiles', { char: 'd' }),
    name: stringFlag('name of the local cluster; defaults to the UID of the system namespace'),
    'secret-name': stringFlag('name of the secret'),
    server: stringFlag('address of the orchestrator API server to write into the secret'),
    'service-account': stringFlag(
      'service account the secret carries credentials of; defaults to mesh-reader-service-account (type remote) or meshd (type config)',
    ),
    type: stringFlag('type of secret', { options: ['remote', 'config'], default: 'remote' }),
  },
})
export class CreateRemoteSecret extends MeshCommand {
  async run(): Promise<void> {
    const { flags } = await this.parse(CreateRemoteSecret);
    const yaml = await withOrchAccess(this.scope, flags as MeshctlOrchFlags, (access) =>
      createRemoteSecret(access.client, {
        namespace: flags.meshNamespace,
        type: flags.type as 'remote' | 'config',
        authType: flags['auth-type'] as 'bearer-token' | 'plugin',
        authPluginName: flags['auth-plugin-name'],
        authPluginConfig: flags['auth-plugin-config'] ?? {},
        createServiceAccount: flags['create-service-account'],
        manifests: flags.manifests,
        name: flags.name,
        secretName: flags['secret-name'],
        server: flags.server,
        serviceAccount: flags['service-account'],
      }),
    );
    process.stdout.write(yaml);
  }
}
