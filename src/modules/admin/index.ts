export { adminLog, AdminLogOptions, DaemonPodAccess, daemonSelector } from './admin-log';
export { ControlzClient, PodRequest } from './controlz-client';
export { parseScopeLevels, changesFor, resetChanges, EVERY_SCOPE, ScopeLevels, ScopeChanges } from './level-flags';
export { renderScopeLevels, scopeTable, scopeRows, ScopeLevelRow, ScopeOutputFormat } from './scope-output';
