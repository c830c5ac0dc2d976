export { alignColumns } from './columns';
export { ConfigDump, readConfigDump } from './dump';
export { formatData } from './output';
export { bootstrapData, versionSummary } from './bootstrap';
export { ecdsData, ecdsTable } from './ecds';
export { EdsFilter, edsData, edsTable } from './eds';
export { routesData, routesTable } from './routes';
export { secretsData, secretsTable } from './secrets';
export { authzCheckTable } from './authz';
