/*
 * The CNI protocol as a plug-in sees it (CNI spec): the operation and container in
 * environment variables, the network config (with `prevResult` when chained) on stdin, a
 * result or an error object on stdout, and a non-zero exit code on error.
 */
import type { Settings } from '../../settings/settings';

export const SUPPORTED_VERSIONS = ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'];

/** Well-known error codes of the CNI spec; 100 and up are the plug-in's own. */
export const CniErrorCode = {
  IncompatibleVersion: 1,
  InvalidEnvironment: 4,
  IoFailure: 5,
  DecodeFailure: 6,
  InvalidConfig: 7,
  TryAgainLater: 11,
  PodLookupFailed: 100,
  InvalidAnnotation: 101,
  RedirectFailed: 102,
  RulesMissing: 103,
} as const;

export class CniError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly details?: string,
  ) {
    super(message);
    this.name = 'CniError';
  }

  toJson(cniVersion: string): Record<string, unknown> {
    return { cniVersion, code: this.code, msg: this.message, ...(this.details ? { details: this.details } : {}) };
  }
}

export type CniCommand = 'ADD' | 'DEL' | 'CHECK' | 'VERSION' | 'GC' | 'STATUS';

export interface CniRequest {
  readonly command: CniCommand;
  readonly containerId: string;
  readonly netns: string;
  readonly ifName: string;
  /** CNI_ARGS as key/value pairs (K8S_POD_NAME, K8S_POD_NAMESPACE...). */
  readonly args: ReadonlyMap<string, string>;
}

/** The CNI_* variables of the plug-in's settings (the runtime passes the request in its environment). */
export type CniVariables = Pick<Settings, 'string'>;

/** Reads the request from the CNI_* settings; ADD, DEL and CHECK need a container ID. */
export function cniRequestFrom(settings: CniVariables): CniRequest {
  const command = settings.string('CNI_COMMAND') as CniCommand | '';
  if (!command || !['ADD', 'DEL', 'CHECK', 'VERSION', 'GC', 'STATUS'].includes(command)) {
    throw new CniError(CniErrorCode.InvalidEnvironment, `CNI_COMMAND: "${command}" is not ADD, DEL, CHECK or VERSION`);
  }
  const containerId = settings.string('CNI_CONTAINERID');
  if (['ADD', 'DEL', 'CHECK'].includes(command) && !containerId) {
    throw new CniError(CniErrorCode.InvalidEnvironment, `CNI_CONTAINERID is required for ${command}`);
  }
  const netns = settings.string('CNI_NETNS');
  if (['ADD', 'CHECK'].includes(command) && !netns) {
    throw new CniError(CniErrorCode.InvalidEnvironment, `CNI_NETNS is required for ${command}`);
  }
  return { command, containerId, netns, ifName: settings.string('CNI_IFNAME'), args: parseCniArgs(settings.string('CNI_ARGS')) };
}

/** `K1=v1;K2=v2` → map; malformed pairs are an error, as the runtime should never send them. */
export function parseCniArgs(text: string): Map<string, string> {
  const args = new Map<string, string>();
  for (const pair of text.split(';').filter(Boolean)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new CniError(CniErrorCode.InvalidEnvironment, `CNI_ARGS: "${pair}" is not KEY=VALUE`);
    args.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  return args;
}

export function versionResult(cniVersion: string): Record<string, unknown> {
  return { cniVersion, supportedVersions: SUPPORTED_VERSIONS };
}
