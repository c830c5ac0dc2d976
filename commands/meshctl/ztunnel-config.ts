import { boolFlag, command, GroupCommand, NotYetImplementedCommand, stringFlag } from '../../src/modules/cli';
import { proxyLogLevelFlags, ztunnelFlags } from './flag-groups';
import { TARGET_USAGE, targetArgs } from './target-arg';

const workloadNamespace = { 'workload-namespace': stringFlag('only show entries of workloads in this namespace') };

@command({
  program: 'meshctl',
  path: 'ztunnel-config',
  summary: 'Read or update the configuration of node proxies (ztunnel)',
  group: true,
})
export class ZtunnelConfig extends GroupCommand {}

@command({
  program: 'meshctl',
  path: 'ztunnel-config all',
  summary: 'Show all configuration of a ztunnel',
  flags: ztunnelFlags,
})
export class ZtunnelConfigAll extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'ztunnel-config certificate',
  aliases: ['certificates', 'certs', 'cert'],
  summary: 'Show the certificates of a ztunnel',
  flags: ztunnelFlags,
})
export class ZtunnelConfigCertificate extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'ztunnel-config connections',
  aliases: ['cons'],
  summary: 'Show the connections of a ztunnel',
  usage: `ztunnel-config connections ${TARGET_USAGE}`,
  flags: {
    ...ztunnelFlags,
    direction: stringFlag('only show connections of this direction', { options: ['inbound', 'outbound'] }),
    raw: boolFlag('show IP addresses instead of names'),
    ...workloadNamespace,
  },
  args: targetArgs,
})
export class ZtunnelConfigConnections extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'ztunnel-config log',
  aliases: ['o'],
  summary: 'Show the logging levels of a ztunnel, optionally updating them',
  usage: `ztunnel-config log ${TARGET_USAGE}`,
  flags: { ...ztunnelFlags, ...proxyLogLevelFlags },
  args: targetArgs,
})
export class ZtunnelConfigLog extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'ztunnel-config policy',
  aliases: ['policies', 'p', 'pol'],
  summary: 'Show the policies of a ztunnel',
  flags: { ...ztunnelFlags, 'policy-namespace': stringFlag('only show policies of this namespace') },
})
export class ZtunnelConfigPolicy extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'ztunnel-config service',
  aliases: ['services', 's', 'svc'],
  summary: 'Show the services known to a ztunnel',
  flags: { ...ztunnelFlags, 'service-namespace': stringFlag('only show services of this namespace') },
})
export class ZtunnelConfigService extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'ztunnel-config workload',
  aliases: ['workloads', 'w'],
  summary: 'Show the workloads known to a ztunnel',
  usage: `ztunnel-config workload ${TARGET_USAGE}`,
  flags: {
    ...ztunnelFlags,
    address: stringFlag('only show the workload with this address'),
    ...workloadNamespace,
    'workload-node': stringFlag('only show workloads on this node'),
  },
  args: targetArgs,
})
export class ZtunnelConfigWorkload extends NotYetImplementedCommand {}
