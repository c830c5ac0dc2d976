/** The mesh's NDS messages (protos/mesh/networking/nds/v1), as the daemon builds them and the agent's DNS proxy reads them. */

/** `mesh.networking.nds.v1.NameTable.NameInfo`, field names as in the proto. */
export interface NameInfo {
  ips: string[];
  registry: string;
  shortname: string;
  namespace: string;
  alt_hosts: string[];
}

/** `mesh.networking.nds.v1.NameTable`: host name (no trailing dot) → its addresses. */
export interface NameTable {
  table: Record<string, NameInfo>;
}
