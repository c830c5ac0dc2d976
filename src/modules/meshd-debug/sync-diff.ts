import { ConfigDumpType } from '../envoy/well-known';
import { canonicalMessage, Json, lookupMessage } from './proto3-json';
import { splitLines, unifiedDiff } from './unified-diff';

/**
 * `meshctl proxy-status <pod>`: what the daemon would send the proxy against what the proxy
 * has, section by section (clusters, listeners, routes), as the incumbent compares them: the
 * dynamic resources only, sorted by name (route virtual hosts too), versions and load times
 * left out, printed as indented proto3 JSON and compared line by line.
 */

/** A config dump in the proxy's JSON layout: `{ configs: [{ '@type': ...ConfigDump, ... }] }`. */
export type ConfigDumpJson = { configs?: unknown[] };

type JsonObject = { [key: string]: Json };

const CONTEXT_LINES = 7;
const INDENT = '   ';

export interface SyncDiff {
  /** What to print, each section's verdict or diff. */
  text: string;
  /** Whether every section matched. */
  matches: boolean;
}

export function syncDiff(daemon: ConfigDumpJson, proxy: ConfigDumpJson, timeZone?: string): SyncDiff {
  const parts: string[] = [];
  let matches = true;
  for (const section of [clusters, listeners]) {
    const diff = sectionDiff(section, daemon, proxy);
    if (diff) {
      matches = false;
      parts.push(diff, '\n');
    } else {
      parts.push(`${section.title} Match\n`);
    }
  }
  const diff = sectionDiff(routes, daemon, proxy);
  const loaded = lastRouteLoad(proxy);
  const when = loaded ? ` (RDS last loaded at ${rfc1123(loaded, timeZone)})` : '';
  if (diff) {
    matches = false;
    parts.push(`Routes Don't Match${when}\n`, diff, '\n');
  } else {
    parts.push(`Routes Match${when}\n`);
  }
  return { text: parts.join(''), matches };
}

interface Section {
  title: string;
  dumpType: string;
  /** The dump section reduced to what is compared. */
  reduce(section: JsonObject): JsonObject;
}

const clusters: Section = {
  title: 'Clusters',
  dumpType: ConfigDumpType.Clusters,
  reduce: (s) => listOf(s, 'dynamicActiveClusters', (e) => strip(e, 'versionInfo', 'lastUpdated'), (e) => nameOf(e.cluster)),
};

const listeners: Section = {
  title: 'Listeners',
  dumpType: ConfigDumpType.Listeners,
  reduce: (s) =>
    listOf(
      s,
      'dynamicListeners',
      (e) => {
        // A reloaded listener has a draining state beside the active one; only the active one counts.
        if (!isObject(e.activeState)) return undefined;
        const { drainingState: _draining, name: _name, ...rest } = e;
        return { ...rest, activeState: strip(e.activeState, 'versionInfo', 'lastUpdated') };
      },
      (e) => nameOf((e.activeState as JsonObject | undefined)?.listener),
    ),
};

const routes: Section = {
  title: 'Routes',
  dumpType: ConfigDumpType.Routes,
  reduce: (s) =>
    listOf(
      s,
      'dynamicRouteConfigs',
      (e) => {
        const entry = strip(e, 'versionInfo', 'lastUpdated');
        const config = entry.routeConfig;
        // Virtual hosts may come in any order.
        if (isObject(config) && Array.isArray(config.virtualHosts)) entry.routeConfig = { ...config, virtualHosts: sortByName(config.virtualHosts) };
        return entry;
      },
      (e) => nameOf(e.routeConfig),
    ),
};

/** The section's diff, '' when it matches. */
function sectionDiff(section: Section, daemon: ConfigDumpJson, proxy: ConfigDumpJson): string {
  // A dump without the section says so in its place (the diff's file names say whose).
  const render = (dump: ConfigDumpJson) => {
    const found = sectionOf(dump, section.dumpType);
    if (!found) return `the config dump has no ${section.dumpType.slice(section.dumpType.lastIndexOf('/') + 1)}`;
    return JSON.stringify(section.reduce(found), null, INDENT);
  };
  return unifiedDiff(splitLines(render(daemon)), splitLines(render(proxy)), `Meshd ${section.title}`, `Proxy ${section.title}`, CONTEXT_LINES);
}

/** The section of `dumpType`, in canonical proto3 JSON. */
function sectionOf(dump: ConfigDumpJson, dumpType: string): JsonObject | undefined {
  const found = (Array.isArray(dump.configs) ? dump.configs : []).find((c) => isObject(c) && c['@type'] === dumpType) as Record<string, unknown> | undefined;
  if (!found) return undefined;
  const { '@type': _type, ...fields } = found;
  const type = lookupMessage(dumpType);
  const json = type ? canonicalMessage(type, fields) : fields;
  return isObject(json) ? (json as JsonObject) : {};
}

/** `{ [field]: entries }` reduced and sorted by name, or `{}` when there are none (as proto3 JSON leaves empty lists out). */
function listOf(section: JsonObject, field: string, reduce: (entry: JsonObject) => JsonObject | undefined, name: (entry: JsonObject) => string): JsonObject {
  const entries = (Array.isArray(section[field]) ? section[field] : []).filter(isObject).map(reduce).filter((e): e is JsonObject => e !== undefined);
  entries.sort((x, y) => (name(x) < name(y) ? -1 : name(x) > name(y) ? 1 : 0));
  return entries.length > 0 ? { [field]: entries } : {};
}

function strip(entry: JsonObject, ...fields: string[]): JsonObject {
  const out = { ...entry };
  for (const f of fields) delete out[f];
  return out;
}

function nameOf(resource: Json | undefined): string {
  return isObject(resource) && typeof resource.name === 'string' ? resource.name : '';
}

function sortByName(list: Json[]): Json[] {
  return [...list].sort((x, y) => (nameOf(x) < nameOf(y) ? -1 : nameOf(x) > nameOf(y) ? 1 : 0));
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** When the proxy last loaded a route configuration (the latest `last_updated`), if its dump says. */
export function lastRouteLoad(proxy: ConfigDumpJson): Date | undefined {
  const section = sectionOf(proxy, ConfigDumpType.Routes);
  let latest: number | undefined;
  for (const e of (Array.isArray(section?.dynamicRouteConfigs) ? section.dynamicRouteConfigs : []).filter(isObject)) {
    const at = typeof e.lastUpdated === 'string' ? Date.parse(e.lastUpdated) : NaN;
    if (!Number.isNaN(at) && at > 0 && (latest === undefined || at > latest)) latest = at;
  }
  return latest === undefined ? undefined : new Date(latest);
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `Mon, 02 Jan 2006 15:04:05 MST` in local time (or `timeZone`), as Go's time.RFC1123. */
export function rfc1123(date: Date, timeZone?: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', year: 'numeric', month: 'numeric', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZoneName: 'short' })
      .formatToParts(date)
      .map((p) => [p.type, p.value]),
  );
  const month = MONTHS[Number(parts.month) - 1];
  const weekday = DAYS.find((d) => parts.weekday?.startsWith(d)) ?? parts.weekday;
  return `${weekday}, ${parts.day} ${month} ${parts.year} ${parts.hour}:${parts.minute}:${parts.second} ${parts.timeZoneName}`;
}
