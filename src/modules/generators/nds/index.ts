export { answersWithEndpoints, wantsNameTable } from '../../model/nds-eligibility';
export { NAME_TABLE_RESOURCE, NameTableGenerator, withNameTable } from './generator';
export { buildNameTable, clusterShortName, NameInfo, NameTable } from './name-table';
