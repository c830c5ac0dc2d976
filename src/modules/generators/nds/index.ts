export { answersWithEndpoints, wantsNameTable } from './eligibility';
export { NAME_TABLE_RESOURCE, NameTableGenerator, withNameTable } from './generator';
export { buildNameTable, clusterShortName, NameInfo, NameTable } from './name-table';
