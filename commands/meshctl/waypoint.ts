import { boolFlag, command, GroupCommand, NotYetImplementedCommand, stringFlag } from '../../src/modules/cli';

/** The group's flag; its subcommands take it too (a cobra persistent flag). */
const waypointFlags = { name: stringFlag('name of the waypoint', { default: 'waypoint' }) };

const revision = { revision: stringFlag('control plane revision of the waypoint', { char: 'r' }) };
const trafficFor = {
  for: stringFlag('kind of traffic the waypoint handles', { options: ['all', 'none', 'service', 'workload'] }),
};

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
    overwrite: boolFlag('replace an existing waypoint enrollment of the namespace'),
    ...revision,
    wait: boolFlag('wait until the waypoint is ready', { char: 'w' }),
  },
})
export class WaypointApply extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'waypoint delete',
  summary: 'Delete waypoints by name, all of them, or those of a revision',
  usage: 'waypoint delete [<name>...]',
  variadic: true,
  flags: { ...waypointFlags, all: boolFlag('delete every waypoint of the namespace'), ...revision },
})
export class WaypointDelete extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'waypoint generate',
  summary: 'Print a waypoint as YAML',
  flags: { ...waypointFlags, ...trafficFor, ...revision },
})
export class WaypointGenerate extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'waypoint list',
  summary: 'List the waypoints',
  flags: { ...waypointFlags, 'all-namespaces': boolFlag('list the waypoints of all namespaces', { char: 'A' }) },
})
export class WaypointList extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'waypoint status',
  summary: 'Show the status of the waypoints of a namespace',
  flags: waypointFlags,
})
export class WaypointStatus extends NotYetImplementedCommand {}
