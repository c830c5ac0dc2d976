import { Command } from '@oclif/core';
import { command, GroupCommand, MeshCommand, stringFlag, uint16Flag } from '../../src/modules/cli';
import { AddOn, ADDONS, dashboardPod, MESHD_DEBUG, openDashboard } from '../../src/modules/dashboard';
import { MeshctlOrchFlags, OrchAccess } from '../../src/modules/orch-access';
import { withOrchAccess } from './orch-access-scope';
import { dashboardFlags } from './flag-groups';
import { TARGET_USAGE, targetArgs } from './target-arg';

const selector = { selector: stringFlag('label selector picking the pod, instead of naming it', { char: 'l' }) };

function uiPort(port: number, of: string) {
  return { 'ui-port': uint16Flag(`port of the ${of} inside the pod`, { default: port }) };
}


type DashFlags = MeshctlOrchFlags & { address: string; port: number; browser: boolean; namespace?: string; meshNamespace: string; selector?: string; 'ui-port'?: number };

/** The pod from a name or `-l`, as the reference checks them; then its UI, served until Ctrl-C. */
abstract class PodDashboardCommand extends MeshCommand {
  protected async serve(flags: DashFlags, target: string | undefined, options: { namespace: (access: OrchAccess) => string; defaultSelector?: string; podPort: number; path: string }): Promise<void> {
    if (flags.selector && target !== undefined) this.fail('name cannot be provided when a selector is specified');
    const selector = flags.selector || options.defaultSelector;
    if (!selector && target === undefined) this.fail('specify a pod or --selector');
    await withOrchAccess(this.scope, flags, async (access) => {
      const pod = await dashboardPod(access, { target, selector, namespace: options.namespace(access), warn: (m) => process.stderr.write(`${m}\n`) });
      await openDashboard(access, pod, options.podPort, flags, options.path, (t) => process.stdout.write(t));
    });
  }
}

/** An add-on UI: its first pod in the mesh namespace (`-i`), by the add-on's label. */
abstract class AddOnDashboardCommand extends MeshCommand {
  protected abstract readonly addOn: AddOn;

  async run(): Promise<void> {
    const { flags } = await this.parse(this.constructor as Command.Class);
    const f = flags as unknown as DashFlags;
    await withOrchAccess(this.scope, f, async (access) => {
      const pod = await dashboardPod(access, { selector: this.addOn.selector, namespace: f.meshNamespace, warn: (m) => process.stderr.write(`${m}\n`) }, `${this.addOn.title} pods`);
      await openDashboard(access, pod, f['ui-port'] ?? this.addOn.uiPort, f, '', (t) => process.stdout.write(t));
    });
  }
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
  flags: { ...dashboardFlags, ctrlz_port: uint16Flag('introspection (ControlZ) port of the pod', { default: 9876 }), ...selector },
  args: targetArgs,
})
export class DashboardControlz extends PodDashboardCommand {
  async run(): Promise<void> {
    const { flags, args } = await this.parse(DashboardControlz);
    // A daemon pod: in -n when given, else the mesh namespace; without a name, the first `app=meshd` pod.
    await this.serve(flags as unknown as DashFlags, args.target, {
      namespace: () => flags.namespace || flags.meshNamespace,
      defaultSelector: MESHD_DEBUG.selector,
      podPort: flags.ctrlz_port,
      path: '',
    });
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
export class DashboardSidecar extends PodDashboardCommand {
  async run(): Promise<void> {
    const { flags, args } = await this.parse(DashboardSidecar);
    process.stderr.write('"dashboard sidecar" is deprecated and will be removed; use "dashboard proxy"\n');
    await this.serve(flags as unknown as DashFlags, args.target, { namespace: (a) => a.namespace(flags.namespace), podPort: flags['ui-port'], path: '' });
  }
}

@command({
  program: 'meshctl',
  path: 'dashboard graphing',
  summary: `Open the metrics-graphing UI (first pod labelled ${ADDONS['graphing'].selector} in the mesh namespace)`,
  flags: { ...dashboardFlags, ...uiPort(3000, 'graphing UI') },
})
export class DashboardGraphing extends AddOnDashboardCommand {
  protected readonly addOn = ADDONS['graphing'];
}

@command({
  program: 'meshctl',
  path: 'dashboard meshd-debug',
  summary: `Open the debug pages (${MESHD_DEBUG.path} on port ${MESHD_DEBUG.port}) of a control-plane pod; without a name, the first ${MESHD_DEBUG.selector} pod`,
  usage: `dashboard meshd-debug ${TARGET_USAGE}`,
  flags: { ...dashboardFlags, ...selector },
  args: targetArgs,
})
export class DashboardMeshdDebug extends PodDashboardCommand {
  async run(): Promise<void> {
    const { flags, args } = await this.parse(DashboardMeshdDebug);
    // A daemon pod: in -n when given, else the mesh namespace; without a name, the first `app=meshd` pod.
    await this.serve(flags as unknown as DashFlags, args.target, {
      namespace: () => flags.namespace || flags.meshNamespace,
      defaultSelector: MESHD_DEBUG.selector,
      podPort: MESHD_DEBUG.port,
      path: MESHD_DEBUG.path,
    });
  }
}

@command({
  program: 'meshctl',
  path: 'dashboard tracing-a',
  summary: `Open the distributed-tracing UI (first pod labelled ${ADDONS['tracing-a'].selector} in the mesh namespace)`,
  flags: { ...dashboardFlags, ...uiPort(16686, 'tracing UI') },
})
export class DashboardTracingA extends AddOnDashboardCommand {
  protected readonly addOn = ADDONS['tracing-a'];
}

@command({
  program: 'meshctl',
  path: 'dashboard topology',
  summary: `Open the service topology UI (first pod labelled ${ADDONS['topology'].selector} in the mesh namespace)`,
  flags: { ...dashboardFlags, ...uiPort(20001, 'topology UI') },
})
export class DashboardTopology extends AddOnDashboardCommand {
  protected readonly addOn = ADDONS['topology'];
}

@command({
  program: 'meshctl',
  path: 'dashboard metrics-store',
  summary: `Open the metrics query UI (first pod labelled ${ADDONS['metrics-store'].selector} in the mesh namespace)`,
  flags: { ...dashboardFlags, ...uiPort(9090, 'metrics query UI') },
})
export class DashboardMetricsStore extends AddOnDashboardCommand {
  protected readonly addOn = ADDONS['metrics-store'];
}

@command({
  program: 'meshctl',
  path: 'dashboard proxy',
  summary: 'Open the admin UI of a proxy, ztunnel or waypoint pod',
  usage: `dashboard proxy ${TARGET_USAGE}`,
  flags: { ...dashboardFlags, ...selector, ...uiPort(15000, 'proxy admin UI') },
  args: targetArgs,
})
export class DashboardProxy extends PodDashboardCommand {
  async run(): Promise<void> {
    const { flags, args } = await this.parse(DashboardProxy);
    // The admin UI's home page is its root.
    await this.serve(flags as unknown as DashFlags, args.target, { namespace: (a) => a.namespace(flags.namespace), podPort: flags['ui-port'], path: '' });
  }
}

@command({
  program: 'meshctl',
  path: 'dashboard tracing-b',
  summary: `Open the tracing UI of the second kind (first pod labelled ${ADDONS['tracing-b'].selector} in the mesh namespace)`,
  flags: { ...dashboardFlags, ...uiPort(8080, 'tracing UI') },
})
export class DashboardTracingB extends AddOnDashboardCommand {
  protected readonly addOn = ADDONS['tracing-b'];
}

@command({
  program: 'meshctl',
  path: 'dashboard tracing-c',
  summary: `Open the tracing UI of the third kind (first pod labelled ${ADDONS['tracing-c'].selector} in the mesh namespace)`,
  flags: { ...dashboardFlags, ...uiPort(9411, 'tracing UI') },
})
export class DashboardTracingC extends AddOnDashboardCommand {
  protected readonly addOn = ADDONS['tracing-c'];
}
