import { MESH_CHAIN_PREFIX } from './chains';
import { isBuiltInChain, Table } from './rule-set';

/** The mesh's footprint in one IP version's tables, read from iptables-save output. */
export interface MeshState {
  /** Mesh chains per table, with their rules as saved (`-A CHAIN ...`). */
  readonly chains: Map<Table, Map<string, string[]>>;
  /** Saved rules of built-in chains that jump to a mesh chain. */
  readonly jumps: { table: Table; line: string }[];
}

export function parseSavedState(saved: string): MeshState {
  const chains = new Map<Table, Map<string, string[]>>();
  const jumps: { table: Table; line: string }[] = [];
  let table: Table | undefined;
  for (const raw of saved.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('*')) {
      table = line.slice(1).trim() as Table;
      continue;
    }
    if (!table) continue;
    const tableChains = chains.get(table) ?? new Map<string, string[]>();
    if (line.startsWith(`:${MESH_CHAIN_PREFIX}`)) {
      tableChains.set(line.slice(1).split(/\s+/)[0], []);
      chains.set(table, tableChains);
      continue;
    }
    if (!line.startsWith('-A ')) continue;
    const chain = line.split(/\s+/)[1];
    if (chain.startsWith(MESH_CHAIN_PREFIX)) {
      const rules = tableChains.get(chain) ?? [];
      rules.push(line);
      tableChains.set(chain, rules);
      chains.set(table, tableChains);
    } else if (isBuiltInChain(chain) && jumpsToMeshChain(line)) {
      jumps.push({ table, line });
    }
  }
  return { chains, jumps };
}

export function hasMeshState(state: MeshState): boolean {
  return state.jumps.length > 0 || [...state.chains.values()].some((c) => c.size > 0);
}

function jumpsToMeshChain(line: string): boolean {
  return new RegExp(`\\s-[jg]\\s+${MESH_CHAIN_PREFIX}`).test(line);
}
