export * from './gateway';
export { ApplyOptions, WaitOptions, Waypoints, WAYPOINT_READY_TIMEOUT_MS } from './waypoints';
export { waypointList, waypointStatus, waypointYaml } from './format';
export { waypointModule } from './module';
