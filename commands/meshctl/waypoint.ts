import { boolFlag, command, GroupCommand, MeshCommand, stringFlag, terminalProgress } from '../../src/modules/cli';
import { OrchClientOptionsToken } from '../../src/modules/orch';
import { MeshctlOrchFlags, meshctlOrchOptions, OrchAccess } from '../../src/modules/orch-access';
import { UserError } from '../../src/modules/shared/user-error';
import { buildWaypoint, DEFAULT_TRAFFIC_TYPE, TrafficType, USE_WAYPOINT_LABEL, WAYPOINT_READY_TIMEOUT_MS, waypointList, Waypoints, waypointStatus, waypointYaml } from '../../src/modules/waypoint';
import { withOrchAccess } from './orch-access-scope';

/** The group's flag; its subcommands take it too (a cobra persistent flag). */
const waypointFlags = { name: stringFlag('name of the waypoint', { default: 'waypoint' }) };

const revision = { revision: stringFlag('control plane revision of the waypoint', { char: 'r' }) };
const trafficFor = {
  for: stringFlag('kind of traffic the waypoint handles', { options: ['all', 'none', 'service', 'workload'], default: DEFAULT_TRAFFIC_TYPE }),
};

type WaypointFlags = MeshctlOrchFlags & { name?: string; namespace?: string };

abstract class WaypointCommand extends MeshCommand {
  /** Runs `work` with the waypoints service and the namespace (`-n`, else the context's) on the orchestrator meshctl's flags name. */
  protected withWaypoints<T>(flags: WaypointFlags, work: (waypoints: Waypoints, namespace: string, access: OrchAccess) => Promise<T>): Promise<T> {
    return withOrchAccess(this.scope, flags, (access) => work(this.scope.resolve(Waypoints, [[OrchClientOptionsToken, meshctlOrchOptions(flags)]]), access.namespace(flags.namespace), access));
  }

  /** Whether `--name` was given on the command line (not just its default). */
  protected nameGiven(): boolean {
    return this.argv.some((a) => a === '--name' || a.startsWith('--name='));
  }
}

@command({
  program: 'meshctl',
  path: 'waypoint',
  summary: 'Manage waypoint configuration',
  flags: waypointFlags,
  group: true,
})
export class Waypoint extends GroupCommand {}

@command({
  program: 'meshctl',
  path: 'waypoint apply',
  summary: 'Apply a waypoint to the cluster',
  flags: {
    ...waypointFlags,
    'enroll-namespace': boolFlag('label the namespace with the waypoint name so it uses the waypoint'),
    ...trafficFor,
    overwrite: boolFlag('replace an existing waypoint of another class or traffic type, or the namespace\'s enrollment with another waypoint'),
    ...revision,
    wait: boolFlag('wait until the waypoint is programmed', { char: 'w' }),
  },
})
export class WaypointApply extends WaypointCommand {
  async run(): Promise<void> {
    const { flags } = await this.parse(WaypointApply);
    await this.withWaypoints(flags as WaypointFlags, async (waypoints, namespace) => {
      const name = flags.name ?? 'waypoint';
      if (flags['enroll-namespace']) await waypoints.checkEnrollment(namespace, name, flags.overwrite === true);
      await waypoints.apply({ name, namespace, for: (flags.for ?? DEFAULT_TRAFFIC_TYPE) as TrafficType, revision: flags.revision, overwrite: flags.overwrite });
      process.stdout.write(`waypoint ${namespace}/${name} applied\n`);
      if (flags.wait) {
        const progress = terminalProgress(`waiting for waypoint ${namespace}/${name}`);
        try {
          await waypoints.waitProgrammed(namespace, name, { timeoutMs: WAYPOINT_READY_TIMEOUT_MS, onProgress: (t) => progress.update(t) });
        } finally {
          progress.done();
        }
        process.stdout.write(`waypoint ${namespace}/${name} is ready\n`);
      }
      // The namespace moves to the waypoint once it is there (after the wait, as the incumbent).
      if (flags['enroll-namespace']) {
        await waypoints.enroll(namespace, name);
        process.stdout.write(`namespace ${namespace} labeled with "${USE_WAYPOINT_LABEL}: ${name}"\n`);
      }
    });
  }
}

@command({
  program: 'meshctl',
  path: 'waypoint delete',
  summary: 'Delete waypoints by name, all of them, or those of a revision',
  usage: 'waypoint delete [<name>...]',
  variadic: true,
  flags: { ...waypointFlags, all: boolFlag('delete every waypoint of the namespace'), ...revision },
})
export class WaypointDelete extends WaypointCommand {
  async run(): Promise<void> {
    const { flags, argv } = await this.parse(WaypointDelete);
    const names = (argv as string[]).filter((a) => a !== '');
    if (flags.all && names.length) throw new UserError('waypoint delete: give names or --all, not both');
    if (flags.revision && names.length) throw new UserError('waypoint delete: give names or --revision, not both');
    await this.withWaypoints(flags as WaypointFlags, async (waypoints, namespace) => {
      let targets: string[];
      if (flags.all || flags.revision) {
        targets = (await waypoints.list(namespace, flags.revision)).map((gw) => gw.metadata.name);
        if (!targets.length) {
          process.stdout.write(`No waypoints found in namespace ${namespace}${flags.revision ? ` for revision ${flags.revision}` : ''}.\n`);
          return;
        }
      } else {
        targets = names.length ? names : [flags.name ?? 'waypoint'];
      }
      for (const name of await waypoints.delete(namespace, targets)) process.stdout.write(`waypoint ${namespace}/${name} deleted\n`);
    });
  }
}

@command({
  program: 'meshctl',
  path: 'waypoint generate',
  summary: 'Print a waypoint as YAML',
  flags: { ...waypointFlags, ...trafficFor, ...revision },
})
export class WaypointGenerate extends WaypointCommand {
  async run(): Promise<void> {
    const { flags } = await this.parse(WaypointGenerate);
    // Nothing is read from the cluster; without -n the waypoint has no namespace (as the incumbent).
    const namespace = flags.namespace ?? '';
    process.stdout.write(waypointYaml(buildWaypoint({ name: flags.name ?? 'waypoint', namespace, for: (flags.for ?? DEFAULT_TRAFFIC_TYPE) as TrafficType, revision: flags.revision })));
  }
}

@command({
  program: 'meshctl',
  path: 'waypoint list',
  summary: 'List the waypoints',
  flags: { ...waypointFlags, 'all-namespaces': boolFlag('list the waypoints of all namespaces', { char: 'A' }) },
})
export class WaypointList extends WaypointCommand {
  async run(): Promise<void> {
    const { flags } = await this.parse(WaypointList);
    const all = flags['all-namespaces'] === true;
    await this.withWaypoints(flags as WaypointFlags, async (waypoints, namespace) => {
      const found = (await waypoints.list(all ? undefined : namespace)).filter((gw) => !this.nameGiven() || gw.metadata.name === flags.name);
      process.stdout.write(waypointList(found, all));
    });
  }
}

@command({
  program: 'meshctl',
  path: 'waypoint status',
  summary: 'Show the status conditions of the waypoints of a namespace (of one with --name)',
  flags: waypointFlags,
})
export class WaypointStatus extends WaypointCommand {
  async run(): Promise<void> {
    const { flags } = await this.parse(WaypointStatus);
    await this.withWaypoints(flags as WaypointFlags, async (waypoints, namespace) => {
      const found = (await waypoints.list(namespace)).filter((gw) => !this.nameGiven() || gw.metadata.name === flags.name);
      if (!found.length && this.nameGiven()) throw new UserError(`waypoint ${namespace}/${flags.name} not found`);
      process.stdout.write(waypointStatus(found, !flags.namespace));
    });
  }
}
