import { alignColumns, TABLE_GAP } from './columns';
import { ConfigDump, list, obj, requireSection, sectionsOf, str } from './dump';
import { toProtoJson } from './proto-json';

/** Every ECDS filter of the dump (all its EcdsConfigDump sections), in dump order. */
function ecdsFilters(dump: ConfigDump): Record<string, unknown>[] {
  requireSection(dump, 'EcdsConfigDump');
  return sectionsOf(dump, 'EcdsConfigDump').flatMap((s) => list(s.ecds_filters).map(obj));
}

export function ecdsData(dump: ConfigDump): unknown {
  return toProtoJson({ ecds_filters: ecdsFilters(dump) });
}

/** Rows sorted by type, then name (filters without a typed config first), as the reference sorts them. */
export function ecdsTable(dump: ConfigDump): string {
  const rows = ecdsFilters(dump).map((f) => {
    const filter = obj(f.ecds_filter);
    return [str(filter.name), str(obj(filter.typed_config)['@type']).replace(/^.*\//, '')];
  });
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  rows.sort((a, b) => cmp(a[1], b[1]) || cmp(a[0], b[0]));
  return alignColumns([['ECDS NAME', 'TYPE'], ...rows], TABLE_GAP);
}
