import { grpcLibrary } from '../shared/grpc-library';
import { UserError } from '../shared/user-error';
import { askDaemon, DaemonChannel, DaemonRequestError, RawDiscoveryResponse } from './debug-client';
import { certificateNamespace, channelSecurity } from './credentials';
import { instanceId } from './sync-status';
import { REVISION_LABEL } from '../model/mesh-labels';
export { REVISION_LABEL };

/**
 * The daemons one meshctl command asks, and how (the XDS-connection flag group): the one at
 * `--xds-address`, or every running daemon pod of the system namespace matching
 * `--xds-label` (default `app=meshd`, plus `mesh.io/rev=<revision>` with `--revision`),
 * each reached on `--xds-port` through a port-forward of the orchestrator API. Security:
 * `--plaintext`, `--cert-dir` (client certificate; no orchestrator needed with an address), or
 * by default a token of the mesh audience for the system namespace's `default` service
 * account, from the orchestrator's TokenRequest API, sent as `authorization: Bearer`.
 */

/** The XDS-connection flags, as the commands parse them. */
export interface XdsConnectionFlags {
  'xds-address'?: string;
  'xds-label'?: string;
  'xds-port': number;
  'cert-dir'?: string;
  authority?: string;
  insecure?: boolean;
  plaintext?: boolean;
  timeout: { milliseconds: number };
}

/** What the session needs of the orchestrator (the reach layer gives it). */
export interface ControlPlaneReach {
  /** The running pods of `namespace` matching the label `selector`. */
  daemonPods(namespace: string, selector: string): Promise<Array<{ name: string; namespace: string }>>;
  /** A local `host:port` forwarded to the pod's port, until `close()`. */
  forward(pod: { name: string; namespace: string }, port: number): Promise<{ address: string; close(): Promise<void> | void }>;
  /** A token of `serviceAccount` in `namespace` for `audiences` (TokenRequest). */
  token(namespace: string, serviceAccount: string, audiences: string[], expirationSeconds: number): Promise<string>;
  /** The mesh roots the daemon publishes in `namespace` (its root-certificate ConfigMap), when there. */
  meshRoots(namespace: string): Promise<string | undefined>;
}

/** What the commands need of the orchestrator besides the daemons: the proxy's pod and its admin port. */
export interface OrchReach extends ControlPlaneReach {
  /** The pod `target` (`[<type>/]<name>[.<namespace>]`) names; `-n`, else the context's namespace, applies without one. */
  resolvePod(target: string, flagNamespace: string | undefined): Promise<{ name: string; namespace: string }>;
  /** The body of GET `path` on the pod's `port` through a port-forward (a 2xx answer; else an error naming the pod). */
  podGet(pod: { name: string; namespace: string }, port: number, path: string): Promise<Buffer>;
  /** Ends every forward and connection it opened. */
  close(): Promise<void>;
}

export interface SessionOptions {
  flags: XdsConnectionFlags;
  /** `--meshNamespace`: where the daemons run, and whose service account the token is for. */
  meshNamespace: string;
  /** `--revision`: only that revision's daemons. */
  revision?: string;
  /** Absent: only `--xds-address` with `--cert-dir` or `--plaintext` can work. */
  reach?: () => ControlPlaneReach;
}

/** The audience of tokens the daemon accepts by default (its TOKEN_AUDIENCES), as the incumbent asks for `istio-ca`. */
export const MESH_TOKEN_AUDIENCE = 'mesh-ca';
/** The service account whose token meshctl presents, as the incumbent's. */
export const TOKEN_SERVICE_ACCOUNT = 'default';
const TOKEN_SECONDS = 3600;
export const DEFAULT_XDS_LABEL = 'app=meshd';

/** No daemon to ask. */
export class ControlPlaneNotFoundError extends UserError {}

/** One daemon's answer, or why it gave none. */
export interface DaemonAnswer {
  /** The pod (`<name>.<namespace>`) or the address asked. */
  label: string;
  response?: RawDiscoveryResponse;
  error?: DaemonRequestError;
}

export class DaemonSession {
  private constructor(
    private readonly channels: DaemonChannel[],
    private readonly forwards: Array<{ close(): Promise<void> | void }>,
  ) {}

  static async open(o: SessionOptions): Promise<DaemonSession> {
    const { flags } = o;
    if (flags['xds-address'] && flags['xds-label']) throw new UserError('give either --xds-address or --xds-label, not both');
    const certDir = flags['cert-dir'] || undefined;
    const plaintext = flags.plaintext ?? false;
    const needsReach = !flags['xds-address'] || (!plaintext && !certDir);
    const reach = needsReach ? o.reach?.() : undefined;
    if (needsReach && !reach) {
      throw new UserError(
        flags['xds-address']
          ? 'token security needs the orchestrator API (a TokenRequest); give --cert-dir or --plaintext to reach the daemon at --xds-address without it'
          : 'finding the daemons needs the orchestrator API; give --xds-address instead',
      );
    }
    const namespace = (certDir && certificateNamespace(certDir)) || o.meshNamespace;
    const metadata: Record<string, string> = {};
    let rootsPem: string | undefined;
    if (!plaintext && !certDir) {
      try {
        metadata.authorization = `Bearer ${await reach!.token(o.meshNamespace, TOKEN_SERVICE_ACCOUNT, [MESH_TOKEN_AUDIENCE], TOKEN_SECONDS)}`;
      } catch (err) {
        throw new UserError(`cannot get a token for service account ${TOKEN_SERVICE_ACCOUNT} in namespace ${o.meshNamespace} (use --cert-dir or --plaintext to go without): ${(err as Error).message}`);
      }
      rootsPem = await reach!.meshRoots(o.meshNamespace);
    }
    const security = channelSecurity({
      plaintext,
      insecure: flags.insecure ?? false,
      authority: flags.authority,
      certDir,
      rootsPem,
      defaultServerName: `meshd.${o.meshNamespace}.svc`,
    });
    const node = { id: `sidecar~0.0.0.0~meshctl-${process.pid}.${namespace}~${namespace}.svc.cluster.local`, metadata: { NAMESPACE: namespace } };
    const channel = (address: string, label: string): DaemonChannel => ({ address, label, ...security, metadata, node, timeoutMs: flags.timeout.milliseconds });
    if (flags['xds-address']) return new DaemonSession([channel(flags['xds-address'], flags['xds-address'])], []);

    const selector = [flags['xds-label'] || DEFAULT_XDS_LABEL, ...(o.revision ? [`${REVISION_LABEL}=${o.revision}`] : [])].join(',');
    const pods = await reach!.daemonPods(o.meshNamespace, selector);
    if (pods.length === 0) throw new ControlPlaneNotFoundError(`no running daemon pods in namespace "${o.meshNamespace}" match ${selector}`);
    const forwards: Array<{ close(): Promise<void> | void }> = [];
    const channels: DaemonChannel[] = [];
    try {
      for (const pod of [...pods].sort((a, b) => a.name.localeCompare(b.name))) {
        const forward = await reach!.forward(pod, flags['xds-port']);
        forwards.push(forward);
        channels.push(channel(forward.address, `daemon pod ${pod.name}.${pod.namespace}`));
      }
    } catch (err) {
      await Promise.all(forwards.map((f) => f.close()));
      throw err;
    }
    return new DaemonSession(channels, forwards);
  }

  /** How many daemons this session asks. */
  get size(): number {
    return this.channels.length;
  }

  /** Asks every daemon at once. */
  askAll(typeUrl: string, names: readonly string[] = []): Promise<DaemonAnswer[]> {
    return Promise.all(
      this.channels.map(async (c): Promise<DaemonAnswer> => {
        try {
          return { label: c.label, response: await askDaemon(c, typeUrl, names) };
        } catch (err) {
          return { label: c.label, error: err instanceof DaemonRequestError ? err : new DaemonRequestError((err as Error).message) };
        }
      }),
    );
  }

  /**
   * Asks the daemons in turn until one answers: a daemon saying NOT_FOUND (the proxy is
   * connected to another replica) passes the question on, any other failure ends it.
   */
  async askFirst(typeUrl: string, names: readonly string[] = []): Promise<RawDiscoveryResponse> {
    let notFound: DaemonRequestError | undefined;
    for (const c of this.channels) {
      try {
        return await askDaemon(c, typeUrl, names);
      } catch (err) {
        if (err instanceof DaemonRequestError && err.code === grpcLibrary().status.NOT_FOUND) {
          notFound = err;
          continue;
        }
        throw err;
      }
    }
    throw notFound ?? new DaemonRequestError('no daemon to ask');
  }

  async close(): Promise<void> {
    await Promise.all(this.forwards.splice(0).map((f) => f.close()));
  }
}

/**
 * Every answer keyed by the answering instance's ID; the first failure when a daemon gave
 * none (a partial picture would pass for the whole one, as the incumbent refuses too).
 */
export function answersByInstance(answers: readonly DaemonAnswer[]): Map<string, RawDiscoveryResponse> {
  const failed = answers.find((a) => a.error || !a.response);
  if (failed) throw failed.error ?? new DaemonRequestError(`${failed.label} gave no answer`);
  return new Map(answers.map((a) => [instanceId(a.response!.controlPlane) || a.label, a.response!]));
}
