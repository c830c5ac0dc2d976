/**
 * Reading a running proxy's admin answers (through whatever reaches its admin port: a
 * port-forward for meshctl), with errors that name the pod: a refused or failed request, a
 * non-2xx answer with the first line the proxy gave, an answer that is not JSON.
 */
import { UserError } from '../shared/user-error';
import { ConfigDump } from './dump';

export interface AdminAnswer {
  status: number;
  body: Buffer;
}

/** One HTTP request to the proxy's admin port. */
export type AdminCall = (method: 'GET' | 'POST', path: string) => Promise<AdminAnswer>;

/** The admin paths the reference reads for each view (Envoy's masks keep the answer small). */
export const ADMIN_PATHS = {
  all: '/config_dump?include_eds=true',
  bootstrap: '/config_dump?mask=bootstrap',
  cluster: '/config_dump?mask=dynamic_active_clusters,static_clusters',
  ecds: '/config_dump',
  eds: '/config_dump?include_eds=true',
  endpoint: '/clusters?format=json',
  listener: '/config_dump?mask=dynamic_listeners,static_listeners',
  route: '/config_dump?mask=dynamic_route_configs,static_route_configs',
  secret: '/config_dump?mask=dynamic_active_secrets',
  authz: '/config_dump',
} as const;

const firstLine = (body: Buffer): string => {
  const line = body.subarray(0, 4096).toString('utf8').split('\n').find((l) => l.trim() !== '') ?? '';
  return line.length > 200 ? `${line.slice(0, 197)}...` : line || '(empty answer)';
};

/** The answer's text; `source` names the proxy (`pod a in namespace b`) in every error. */
export async function adminText(call: AdminCall, method: 'GET' | 'POST', path: string, source: string): Promise<string> {
  const answer = await call(method, path);
  if (answer.status < 200 || answer.status >= 300) {
    throw new UserError(`the proxy admin of ${source} answered ${answer.status} to ${method} ${path}: ${firstLine(answer.body)}`);
  }
  return answer.body.toString('utf8');
}

/** The answer parsed as JSON. */
export async function adminJson(call: AdminCall, path: string, source: string): Promise<unknown> {
  const text = await adminText(call, 'GET', path, source);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UserError(`the proxy admin of ${source} answered GET ${path} with something that is not JSON: ${(err as Error).message}`);
  }
}

/** A live `/config_dump`, in the form the renderers take (`file` names the pod in their errors). */
export async function liveConfigDump(call: AdminCall, path: string, source: string): Promise<ConfigDump> {
  const data = await adminJson(call, path, source);
  const configs = (data as { configs?: unknown } | null)?.configs;
  if (!Array.isArray(configs)) throw new UserError(`the proxy admin of ${source} answered GET ${path} without a "configs" list: is ${path.split('?')[0]} a config dump there?`);
  return { file: `of ${source}`, configs: configs as ConfigDump['configs'] };
}
