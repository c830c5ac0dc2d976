import { stringify } from 'yaml';
import { command, intFlag, MeshCommand, stringFlag } from '../../src/modules/cli';
import { xdsConnectionFlags } from './flag-groups';
import { outputFormatFlag } from './flag-types';
import { fetchSyncz, filterNamespace, JsonObject, statusTable } from './proxy-status-xds';
import { TARGET_USAGE, targetArgs } from './target-arg';

// One command serves both `proxy-status` and `experimental proxy-status` (same flags and effect).
@command({
  program: 'meshctl',
  path: 'proxy-status',
  aliases: ['ps', 'experimental proxy-status', 'experimental ps'],
  summary: 'Show the last xDS sync sent to and acknowledged by each proxy; for one proxy, the difference',
  usage: `proxy-status ${TARGET_USAGE}`,
  flags: {
    ...xdsConnectionFlags,
    file: stringFlag('compare against this proxy config dump (JSON) instead of asking the proxy', { char: 'f' }),
    revision: stringFlag('control plane revision to ask', { char: 'r' }),
    // The reference's, not in the spec's list (conformance README, proxy-config/).
    output: outputFormatFlag(['json', 'yaml']),
    verbosity: intFlag('0: the subscribed types of each proxy; 1 or more: one column per xDS type', { default: 0, min: 0 }),
  },
  args: targetArgs,
})
export class ProxyStatus extends MeshCommand {
  async run(): Promise<void> {
    const { flags, args } = await this.parse(ProxyStatus);
    if (args.target !== undefined) this.fail('proxy-status for one proxy (the config diff) is not supported yet; omit the proxy name');
    if (flags.file) this.fail('--file compares one proxy\'s config and is not supported yet');
    if (!flags['xds-address']) this.fail('--xds-address is required: finding the control plane through the orchestrator is not supported yet');
    let response: JsonObject;
    try {
      response = await fetchSyncz({
        address: flags['xds-address'],
        plaintext: flags.plaintext ?? false,
        insecure: flags.insecure ?? false,
        authority: flags.authority,
        certDir: flags['cert-dir'],
        timeoutMs: flags.timeout.milliseconds,
      });
    } catch (err) {
      this.fail((err as Error).message);
    }
    if (flags.namespace) response = filterNamespace(response, flags.namespace);
    if (flags.output === 'json') process.stdout.write(JSON.stringify(response, null, 4) + '\n');
    else if (flags.output === 'yaml') process.stdout.write(stringify(response));
    else process.stdout.write(statusTable([response], flags.verbosity));
  }
}
