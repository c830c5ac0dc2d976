import { Duration } from './duration';

/** The spec's type letters: boolean, string, integer, duration, floating point. */
export type SettingType = 'B' | 'S' | 'I' | 'D' | 'F';

export type Program = 'pilot-discovery' | 'pilot-agent' | 'install-cni' | 'meshctl';

export const PROGRAMS: readonly Program[] = ['pilot-discovery', 'pilot-agent', 'install-cni', 'meshctl'];

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
  readonly programs: readonly Program[];
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
