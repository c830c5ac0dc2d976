import { arrayFlag, boolFlag, durationFlag, listFlag, stringFlag, uint16Flag } from '../../src/modules/cli';
import { outputFormatFlag } from './flag-types';

/**
 * The flag groups of spec/03 ("Flag groups"), defined once and spread into the commands
 * that take them. Commands needing only part of a group take it through pickFlags.
 */

export function pickFlags<T extends object, K extends keyof T>(flags: T, ...names: K[]): Pick<T, K> {
  return Object.fromEntries(names.map((name) => [name, flags[name]])) as Pick<T, K>;
}

/** Direct connection to the control plane over xDS. */
export const xdsConnectionFlags = {
  authority: stringFlag('server name (subject alternative name) expected in the control plane certificate'),
  'cert-dir': stringFlag('directory of client certificates; when set, certificate security is used instead of a token'),
  insecure: boolFlag('skip verification of the server certificate and domain name'),
  plaintext: boolFlag('talk plain-text HTTP/2 to the control plane, without TLS'),
  timeout: durationFlag('how long to wait for the control plane', { default: '30s' }),
  'xds-address': stringFlag('xDS address of the control plane'),
  'xds-label': stringFlag('label selector picking the control-plane daemon pods to connect to (default app=meshd)'),
  'xds-port': uint16Flag('xDS port of the control plane', { default: 15012 }),
};

/** Local port-forward serving a web UI. */
export const dashboardFlags = {
  address: stringFlag('address to listen on: an IP address, or localhost (tries both 127.0.0.1 and ::1)', { default: 'localhost' }),
  browser: boolFlag('open the UI in a browser; --browser=false only prints its URL', { default: true }),
  port: uint16Flag('local port to listen on; 0 picks a free one', { char: 'p', default: 0 }),
};

const outputShortJsonYaml = () => outputFormatFlag(['json', 'yaml', 'short'], 'short');

/** Reading a proxy's configuration dump. */
export const proxyConfigFlags = {
  file: stringFlag('read this proxy config dump (JSON) instead of asking the proxy', { char: 'f' }),
  output: outputShortJsonYaml(),
  'proxy-admin-port': uint16Flag('admin port of the proxy', { default: 15000 }),
};

/** Reading a ztunnel (node proxy) configuration dump. */
export const ztunnelFlags = {
  file: stringFlag('read this ztunnel config dump (JSON; - for standard input) instead of asking a ztunnel', { char: 'f' }),
  node: stringFlag('ask the ztunnel running on this node (instead of naming its pod)'),
  output: outputShortJsonYaml(),
  'proxy-admin-port': uint16Flag('admin port of the ztunnel', { default: 15000 }),
};

/** Rendering the install from an operator custom resource and overrides. */
export const installSetFlags = {
  filename: listFlag('operator custom resource file; repeatable, later files overlay earlier ones', { char: 'f' }),
  manifests: stringFlag('directory of the charts and profiles', { char: 'd' }),
  revision: stringFlag('control plane revision to target', { char: 'r' }),
  // StringArray, not a comma list: an override value may itself contain commas.
  set: arrayFlag(
    'override an operator value, e.g. profile=demo or a component or mesh config value; escape dots inside a key with a backslash',
    { char: 's' },
  ),
  'dry-run': boolFlag('print to the console only; change nothing'),
  force: boolFlag('proceed even when validation fails'),
  charts: stringFlag('deprecated: use --manifests'),
};

/**
 * Not a named group of the spec: the log-level flags `ztunnel-config log` takes "as
 * `proxy-config log`".
 */
export const proxyLogLevelFlags = {
  level: stringFlag('levels to set: one <level>, or [<logger>:]<level>,...; levels are trace, debug, info, warning, error, critical, off'),
  reset: boolFlag('reset every logger to the warning level', { char: 'r' }),
};
