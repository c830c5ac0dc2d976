import { Duration } from './duration';
import { CATALOGUE, FAMILIES, SettingName, SettingNameOfType, SettingTypeOf } from './catalogue';
import { Environment } from './environment';
import { defaultValue, parseSettingValue, SettingValueError } from './parse';
import { SettingDefinition, SettingFamily, SettingReader, SettingValue, ValueOfType } from './types';

export interface ResolvedSetting {
  readonly definition: SettingDefinition;
  readonly value: SettingValue;
  /** True when the environment set it; false when the default applies. */
  readonly fromEnvironment: boolean;
  readonly raw: string | undefined;
}

export const SettingsToken = Symbol.for('mesh.Settings');

/**
 * Typed, validated view of the environment for one program. Every setting the program
 * reads is parsed up front, so a bad value stops the program at start rather than when
 * some code path first touches it.
 */
export class Settings {
  private readonly resolved = new Map<string, ResolvedSetting>();
  private readonly definitions = new Map<string, SettingDefinition>();

  /**
   * @throws SettingValueError for the first setting (in catalogue order) that is set to a
   *   value that does not parse, among those the program reads.
   */
  constructor(
    readonly program: SettingReader,
    private readonly env: Environment,
    definitions: readonly SettingDefinition[] = CATALOGUE,
    private readonly families: readonly SettingFamily[] = FAMILIES,
  ) {
    for (const def of definitions) this.add(def);
  }

  /** Adds definitions (from plugins) after construction, validating their values. */
  extend(definitions: readonly SettingDefinition[]): void {
    for (const def of definitions) {
      if (this.definitions.has(def.name)) throw new Error(`setting ${def.name} is defined twice`);
      this.add(def);
    }
  }

  private add(def: SettingDefinition): void {
    this.definitions.set(def.name, def);
    const raw = this.env[def.name];
    const reads = def.programs.includes(this.program) || (def.alsoReadBy?.includes(this.program) ?? false);
    const fromEnvironment = reads && raw !== undefined;
    const value = fromEnvironment ? parseSettingValue(def, raw) : defaultValue(def, this.program);
    this.resolved.set(def.name, { definition: def, value, fromEnvironment, raw: fromEnvironment ? raw : undefined });
  }

  bool(name: SettingNameOfType<'B'>): boolean {
    return this.typed(name, 'B');
  }
  string(name: SettingNameOfType<'S'>): string {
    return this.typed(name, 'S');
  }
  int(name: SettingNameOfType<'I'>): number {
    return this.typed(name, 'I');
  }
  float(name: SettingNameOfType<'F'>): number {
    return this.typed(name, 'F');
  }
  duration(name: SettingNameOfType<'D'>): Duration {
    return this.typed(name, 'D');
  }

  get<N extends SettingName>(name: N): ValueOfType[SettingTypeOf<N>] {
    return this.resolve(name).value as ValueOfType[SettingTypeOf<N>];
  }

  /** For names only known at run time (plugin settings): the setting with its definition. */
  resolve(name: string): ResolvedSetting {
    const found = this.resolved.get(name);
    if (!found) throw new Error(`unknown setting ${name}`);
    return found;
  }

  has(name: string): boolean {
    return this.resolved.has(name);
  }

  all(): ResolvedSetting[] {
    return [...this.resolved.values()];
  }

  /** The declared families of prefixed variables. */
  allFamilies(): readonly SettingFamily[] {
    return this.families;
  }

  /**
   * The variables of a declared family this program reads, by the name after the prefix
   * (`MESH_META_CLUSTER_ID=a` → `{ CLUSTER_ID: 'a' }`).
   */
  family(prefix: string): Record<string, string> {
    const family = this.families.find((f) => f.prefix === prefix);
    if (!family) throw new Error(`unknown setting family ${prefix}*`);
    if (!family.programs.includes(this.program)) return {};
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(this.env)) {
      if (name.startsWith(prefix) && name.length > prefix.length && value !== undefined) out[name.slice(prefix.length)] = value;
    }
    return out;
  }

  private typed<T extends keyof ValueOfType>(name: string, type: T): ValueOfType[T] {
    const found = this.resolve(name);
    if (found.definition.type !== type) {
      throw new Error(`setting ${name} is of type ${found.definition.type}, not ${type}`);
    }
    return found.value as ValueOfType[T];
  }
}

export { SettingValueError };
