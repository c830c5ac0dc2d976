import * as fs from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { UserError } from '../shared/user-error';

/** One `Any` of a proxy admin `/config_dump`: its `@type` and snake_case fields. */
export type DumpSection = Record<string, unknown> & { '@type'?: string };

/** A proxy admin config dump read from a file, remembering the file for error messages. */
export interface ConfigDump {
  file: string;
  configs: DumpSection[];
}

/** Reads a saved config dump (JSON, or YAML when `allowYaml`); every failure is one line naming the file. */
export function readConfigDump(file: string, options: { allowYaml?: boolean } = {}): ConfigDump {
  const data = readDumpData(file, options);
  const configs = (data as { configs?: unknown } | null)?.configs;
  if (!Array.isArray(configs)) throw new UserError(`config dump ${file} has no "configs" list: is it a proxy /config_dump?`);
  return { file, configs: configs as DumpSection[] };
}

/** The parsed content of a saved admin answer (JSON, or YAML when `allowYaml`). */
export function readDumpData(file: string, options: { allowYaml?: boolean } = {}): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserError(`cannot read config dump ${file}: ${code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
  let data: unknown;
  try {
    data = options.allowYaml ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    const what = options.allowYaml ? 'YAML or JSON' : 'JSON';
    throw new UserError(`config dump ${file} is not valid ${what}: ${(err as Error).message.split('\n')[0]}`);
  }
  return data;
}

/** The sections of the given admin type (`BootstrapConfigDump`...), in dump order. */
export function sectionsOf(dump: ConfigDump, type: string): DumpSection[] {
  return dump.configs.filter((c) => typeof c?.['@type'] === 'string' && c['@type'].endsWith(`.${type}`));
}

/** The first section of the type, or a one-line error naming the file. */
export function requireSection(dump: ConfigDump, type: string): DumpSection {
  const section = sectionsOf(dump, type)[0];
  if (!section) throw new UserError(`config dump ${dump.file} has no ${type} section`);
  return section;
}

/** Field access on loosely typed dump JSON. */
export const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
export const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v));
