/**
 * The metrics-store queries of `meshctl x metrics`: the incumbent's queries on the mesh's
 * standard request metrics (server-side reports: `reporter="destination"`), per workload
 * `<name>[.<namespace>]` (both matched as prefixes, as the incumbent does) over a window.
 */
import { Duration } from '../../settings/duration';

/** Requests handled, counted by the destination proxy, labelled with the response code. */
export const REQUESTS_TOTAL = 'mesh_requests_total';
/** Request latency histogram (milliseconds), `_bucket` series with `le`. */
export const REQUEST_DURATION = 'mesh_request_duration_milliseconds';

/** `name[.namespace]` of a workload argument. */
export function workloadOf(arg: string): { name: string; namespace: string } {
  const [name, namespace = ''] = arg.split('.');
  return { name, namespace };
}

/** The text escaped for an RE2 regular expression inside a PromQL string. */
function literal(text: string): string {
  return text.replace(/[\\.+*?()|[\]{}^$]/g, (c) => `\\\\${c}`).replace(/"/g, '\\"');
}

function selector(workload: { name: string; namespace: string }, extra = ''): string {
  return `destination_workload=~"${literal(workload.name)}.*", destination_workload_namespace=~"${literal(workload.namespace)}.*",reporter="destination"${extra}`;
}

export function requestRateQuery(arg: string, window: Duration): string {
  return `sum(rate(${REQUESTS_TOTAL}{${selector(workloadOf(arg))}}[${window}]))`;
}

export function errorRateQuery(arg: string, window: Duration): string {
  return `sum(rate(${REQUESTS_TOTAL}{${selector(workloadOf(arg), ',response_code=~"[45][0-9]{2}"')}}[${window}]))`;
}

/** `histogram_quantile(0.500000, ...)`: the quantile printed as Go's %f prints it. */
export function latencyQuery(arg: string, window: Duration, quantile: number): string {
  return `histogram_quantile(${quantile.toFixed(6)}, sum(rate(${REQUEST_DURATION}_bucket{${selector(workloadOf(arg))}}[${window}])) by (le))`;
}
