import { KindDefinition } from '../kind';
import { ServiceEntryKind } from './service-entry';
import { WorkloadEntryKind } from './workload-entry';

/** Every resource kind the mesh reads. */
export const KINDS: KindDefinition[] = [ServiceEntryKind, WorkloadEntryKind] as KindDefinition[];
