/**
 * Path parameters of the injection webhook, as the incumbent reads them: a webhook
 * configuration may call `/inject/cluster/c1/net/n1` (a value's slashes written `--slash--`)
 * or the older `/inject/:ENV:cluster=c1:ENV:net=n1`, to set proxy environment variables of
 * the pods it injects. `cluster` and `net` name the cluster ID and network; another key is
 * taken, upper-cased, as the variable's own name.
 */
const URL_PARAMETER_TO_ENV: Readonly<Record<string, string>> = { cluster: 'MESH_META_CLUSTER_ID', net: 'MESH_META_NETWORK' };

/** An environment variable name a path may set. */
const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

export function injectPathEnvs(path: string): Record<string, string> {
  const rest = path.replace(/\/+$/, '').split('/').slice(2).join('/');
  if (rest === '') return {};
  const pairs: Array<[string, string]> = [];
  if (rest.startsWith(':ENV:')) {
    for (const part of rest.split(':ENV:').slice(1)) {
      const eq = part.indexOf('=');
      if (eq > 0) pairs.push([part.slice(0, eq), part.slice(eq + 1)]);
    }
  } else {
    const parts = rest.split('/');
    // An odd key without a value is ignored, as the incumbent does.
    for (let i = 0; i + 1 < parts.length; i += 2) pairs.push([parts[i], parts[i + 1].replaceAll('--slash--', '/')]);
  }
  const envs: Record<string, string> = {};
  for (const [key, value] of pairs) {
    const name = URL_PARAMETER_TO_ENV[key] ?? key.toUpperCase();
    if (ENV_NAME.test(name)) envs[name] = decodeURIComponentSafe(value);
  }
  return envs;
}

function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
