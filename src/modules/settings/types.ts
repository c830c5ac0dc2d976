import { Duration } from './duration';

/** The spec's type letters: boolean, string, integer, duration, floating point. */
export type SettingType = 'B' | 'S' | 'I' | 'D' | 'F';

export type Program = 'pilot-discovery' | 'pilot-agent' | 'install-cni' | 'meshctl';

export const PROGRAMS: readonly Program[] = ['pilot-discovery', 'pilot-agent', 'install-cni', 'meshctl'];

/**
 * Who reads a setting: a program, or the `mesh-cni` plug-in executable the installer puts on
 * the node (the container runtime runs it with the CNI request in its environment).
 */
export type SettingReader = Program | 'mesh-cni';

export interface ValueOfType {
  B: boolean;
  S: string;
  I: number;
  D: Duration;
  F: number;
}

export type SettingValue = ValueOfType[SettingType];

export interface SettingDefinition<N extends string = string, T extends SettingType = SettingType> {
  readonly name: N;
  readonly type: T;
  /** Default as written in the spec; undefined = unset (string settings read as ''). */
  readonly default: string | undefined;
  readonly meaning: string;
  readonly programs: readonly SettingReader[];
  /** Readers the spec's table does not list that read it anyway, as a variable of their platform. */
  readonly alsoReadBy?: readonly SettingReader[];
  /** A different default for some readers (the agent's POD_NAMESPACE is its workload's, not the daemon's). */
  readonly defaultFor?: Partial<Record<SettingReader, string>>;
  /** True for settings the spec's tables do not list: the mesh's own, or variables its programs read from their platform. */
  readonly ours?: boolean;
}

/**
 * A family of variables sharing a prefix, each read under its own name
 * (`MESH_META_<NAME>` becomes node metadata `<NAME>`).
 */
export interface SettingFamily {
  readonly prefix: string;
  readonly meaning: string;
  readonly programs: readonly SettingReader[];
}

export const TYPE_NAMES: Record<SettingType, string> = {
  B: 'a boolean',
  S: 'a string',
  I: 'an integer',
  D: 'a duration',
  F: 'a floating-point number',
};

export const TYPE_EXAMPLES: Record<SettingType, string> = {
  B: 'true, false, 1 or 0',
  S: 'any text',
  I: 'a whole number such as 100',
  D: 'such as 100ms, 30s or 1h0m0s',
  F: 'a number such as 0.5',
};
