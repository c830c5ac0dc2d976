import { parse } from 'yaml';
import { InjectionConfigError } from './proxy-config';
import { FuncMap, Template, TemplateError } from './template';

/**
 * The injector's configuration (the `config` key of its config map) and values (the `values`
 * key): which templates exist and which run by default, the injection policy, the label
 * selectors that force or refuse injection, and the chart values the templates read.
 */

export type InjectionPolicy = 'enabled' | 'disabled';

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

export interface InjectionConfig {
  /** `enabled`, `disabled`, or anything else (injection off, as the incumbent does). */
  readonly policy: string;
  readonly defaultTemplates: readonly string[];
  readonly templates: ReadonlyMap<string, Template>;
  readonly aliases: ReadonlyMap<string, readonly string[]>;
  readonly neverInjectSelector: readonly LabelSelector[];
  readonly alwaysInjectSelector: readonly LabelSelector[];
  readonly injectedAnnotations: Readonly<Record<string, string>>;
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** YAML (or JSON) text as data; a YAML alias bomb or bad syntax is an error naming `where`. */
export function parseYamlDocument(text: string, where: string): unknown {
  try {
    return parse(text, { maxAliasCount: 100, uniqueKeys: false });
  } catch (err) {
    throw new InjectionConfigError(`${where}: not valid YAML: ${String((err as Error).message).split('\n')[0]}`);
  }
}

/** Parses the injection config; every template is parsed now, so a bad one is named at once. */
export function parseInjectionConfig(text: string, where: string, funcs: FuncMap, extraTemplates: Record<string, string> = {}): InjectionConfig {
  const doc = parseYamlDocument(text, where) ?? {};
  if (!isMap(doc)) throw new InjectionConfigError(`${where}: must be a mapping (policy, defaultTemplates, templates...)`);
  const fail = (field: string, why: string): never => {
    throw new InjectionConfigError(`${where}: ${field}: ${why}`);
  };
  const strings = (v: unknown, field: string): string[] => {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || v.some((e) => typeof e !== 'string')) return fail(field, 'must be a list of strings');
    return v as string[];
  };
  const rawTemplates: Record<string, string> = {};
  if (doc.templates !== undefined && doc.templates !== null) {
    if (!isMap(doc.templates)) fail('templates', 'must be a mapping of template name to template text');
    for (const [name, t] of Object.entries(doc.templates as Record<string, unknown>)) {
      if (typeof t !== 'string') fail(`templates.${name}`, 'must be a string');
      rawTemplates[name] = t as string;
    }
  }
  Object.assign(rawTemplates, extraTemplates);
  const templates = new Map<string, Template>();
  for (const [name, text] of Object.entries(rawTemplates)) {
    try {
      templates.set(name, Template.parse(name, text, funcs));
    } catch (err) {
      if (err instanceof TemplateError) throw new InjectionConfigError(`${where}: templates.${name}: ${err.message}`);
      throw err;
    }
  }
  const aliases = new Map<string, string[]>();
  if (doc.aliases !== undefined && doc.aliases !== null) {
    if (!isMap(doc.aliases)) fail('aliases', 'must be a mapping of name to a list of template names');
    for (const [name, list] of Object.entries(doc.aliases as Record<string, unknown>)) aliases.set(name, strings(list, `aliases.${name}`));
  }
  const selectors = (v: unknown, field: string): LabelSelector[] => {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || v.some((s) => !isMap(s))) return fail(field, 'must be a list of label selectors');
    return v as LabelSelector[];
  };
  const injected: Record<string, string> = {};
  if (doc.injectedAnnotations !== undefined && doc.injectedAnnotations !== null) {
    if (!isMap(doc.injectedAnnotations)) fail('injectedAnnotations', 'must be a mapping of strings');
    for (const [k, v] of Object.entries(doc.injectedAnnotations as Record<string, unknown>)) injected[k] = String(v);
  }
  const defaults = strings(doc.defaultTemplates, 'defaultTemplates');
  if (doc.policy !== undefined && doc.policy !== null && typeof doc.policy !== 'string') fail('policy', 'must be enabled or disabled');
  return {
    policy: (doc.policy as string | undefined) ?? '',
    defaultTemplates: defaults.length > 0 ? defaults : ['sidecar'],
    templates,
    aliases,
    neverInjectSelector: selectors(doc.neverInjectSelector, 'neverInjectSelector'),
    alwaysInjectSelector: selectors(doc.alwaysInjectSelector, 'alwaysInjectSelector'),
    injectedAnnotations: injected,
  };
}

/** The injection values (chart values); YAML or JSON, a mapping. */
export function parseValues(text: string, where: string): Record<string, unknown> {
  const doc = parseYamlDocument(text, where) ?? {};
  if (!isMap(doc)) throw new InjectionConfigError(`${where}: must be a mapping of values`);
  return doc;
}

/** Does a label selector match these labels? An empty selector matches nothing here (as the incumbent skips it). */
export function selectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean | 'empty' {
  const match = selector.matchLabels ?? {};
  const exprs = selector.matchExpressions ?? [];
  if (Object.keys(match).length === 0 && exprs.length === 0) return 'empty';
  for (const [k, v] of Object.entries(match)) if (labels[k] !== String(v)) return false;
  for (const e of exprs) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const values = (e.values ?? []).map(String);
    switch (e.operator) {
      case 'In':
        if (!has || !values.includes(labels[e.key])) return false;
        break;
      case 'NotIn':
        if (has && values.includes(labels[e.key])) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        throw new InjectionConfigError(`label selector: ${JSON.stringify(e.operator)} is not a valid operator (In, NotIn, Exists, DoesNotExist)`);
    }
  }
  return true;
}
