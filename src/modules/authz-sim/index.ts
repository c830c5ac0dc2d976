/** `meshctl x authz simulate`: would this request be allowed, and by which rule? (the daemon's generators + the built-in proxy's filters, in-process). */
export { authzSimModule } from './module';
export { AuthzSimulator, Simulation, SimulationInputs } from './simulator';
export { Answer, Decision, EngineResult, RuleResult, ruleName } from './answer';
export { ClaimsSigner, withKeySets } from './key-sets';
export { overlay, readConfigFiles } from './config-files';
export { ClusterWorkloads, FileWorkloads, Workload, Workloads } from './workloads';
export { checkRequest, parseClaims, parseHeaders, parseLabels, portOf, requestFromEntry, SimRequest, usage, USAGE_EXIT } from './request';
export { formatMatrix, formatOne, meetsExpectation, OutputFormat, statusNumber } from './render';
