import { command, GroupCommand, MeshCommand, NotYetImplementedCommand, stringFlag, uint16Flag, withProgress } from '../../src/modules/cli';
import { dashboardPod, listenPreferring, serveDashboard } from '../../src/modules/dashboard';
import { OrchClientOptionsToken } from '../../src/modules/orch';
import { meshctlOrchOptions, MeshctlOrchFlags, OrchAccess } from '../../src/modules/orch-access';
import { dashboardFlags } from './flag-groups';
import { TARGET_USAGE, targetArgs } from './target-arg';

const selector = { selector: stringFlag('label selector picking the pod, instead of naming it', { char: 'l' }) };

function uiPort(port: number, of: string) {
  return { 'ui-port': uint16Flag(`port of the ${of} inside the pod`, { default: port }) };
}

// The group's flags are cobra persistent flags: every subcommand takes them too.
@command({
  program: 'meshctl',
  path: 'dashboard',
  aliases: ['dash', 'd'],
  summary: 'Open the web UI of a mesh component or add-on',
  flags: dashboardFlags,
  group: true,
})
export class Dashboard extends GroupCommand {}

@command({
  program: 'meshctl',
  path: 'dashboard controlz',
  summary: 'Open the introspection (ControlZ) UI of a control-plane pod',
  usage: `dashboard controlz ${TARGET_USAGE}`,
  flags: {
    ...dashboardFlags,
    ctrlz_port: uint16Flag('introspection (ControlZ) port of the pod', { default: 9876 }),
    selector: stringFlag('label selector picking the pod, instead of naming it (app=meshd when neither is given)', { char: 'l' }),
  },
  args: targetArgs,
})
export class DashboardControlz extends MeshCommand {
  async run(): Promise<void> {
    const { flags, args } = await this.parse(DashboardControlz);
    const access = this.scope.resolve(OrchAccess, [[OrchClientOptionsToken, meshctlOrchOptions(flags as MeshctlOrchFlags)]]);
    try {
      const pod = await withProgress('looking for the control-plane pod...', () =>
        dashboardPod(access, {
          target: args.target,
          selector: flags.selector,
          defaultSelector: 'app=meshd',
          namespace: flags.namespace || flags.meshNamespace,
          warn: (message) => this.logging.scope('default').warn(message),
        }),
      );
      // The local port: --port, else 9876 here too when free, else any.
      const forward = await withProgress(`forwarding to the ControlZ port ${flags.ctrlz_port} of ${pod.metadata!.name}...`, () =>
        listenPreferring(
          (port) => access.forwarder.listen(pod, flags.ctrlz_port, { address: flags.address, port, onError: (err) => this.logging.scope('default').warn(err.message) }),
          flags.port,
          flags.ctrlz_port,
        ),
      );
      await serveDashboard(forward, { browser: flags.browser, out: (text) => process.stdout.write(text) });
    } finally {
      await access.close();
    }
  }
}

@command({
  program: 'meshctl',
  path: 'dashboard sidecar',
  summary: 'Deprecated: use "dashboard proxy"',
  usage: `dashboard sidecar ${TARGET_USAGE}`,
  flags: { ...dashboardFlags, ...selector, ...uiPort(15000, 'proxy admin UI') },
  args: targetArgs,
})
export class DashboardSidecar extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'dashboard graphing',
  summary: 'Open the metrics-graphing UI',
  flags: { ...dashboardFlags, ...uiPort(3000, 'graphing UI') },
})
export class DashboardGraphing extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'dashboard meshd-debug',
  summary: 'Open the debug UI of a control-plane pod',
  usage: `dashboard meshd-debug ${TARGET_USAGE}`,
  flags: { ...dashboardFlags, ...selector },
  args: targetArgs,
})
export class DashboardMeshdDebug extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'dashboard tracing-a',
  summary: 'Open the distributed-tracing UI',
  flags: { ...dashboardFlags, ...uiPort(16686, 'tracing UI') },
})
export class DashboardTracingA extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'dashboard topology',
  summary: 'Open the service topology UI',
  flags: { ...dashboardFlags, ...uiPort(20001, 'topology UI') },
})
export class DashboardTopology extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'dashboard metrics-store',
  summary: 'Open the metrics query UI',
  flags: { ...dashboardFlags, ...uiPort(9090, 'metrics query UI') },
})
export class DashboardMetricsStore extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'dashboard proxy',
  summary: 'Open the admin UI of a proxy, ztunnel or waypoint pod',
  usage: `dashboard proxy ${TARGET_USAGE}`,
  flags: { ...dashboardFlags, ...selector, ...uiPort(15000, 'proxy admin UI') },
  args: targetArgs,
})
export class DashboardProxy extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'dashboard tracing-b',
  summary: 'Open the tracing UI (second kind)',
  flags: { ...dashboardFlags, ...uiPort(8080, 'tracing UI') },
})
export class DashboardTracingB extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'dashboard tracing-c',
  summary: 'Open the tracing UI (third kind)',
  flags: { ...dashboardFlags, ...uiPort(9411, 'tracing UI') },
})
export class DashboardTracingC extends NotYetImplementedCommand {}
