/**
 * The agent's side of mesh security: its workload certificate (from the CA, renewed), the SDS
 * server the proxy reads it from, and the TLS credentials toward the daemon. Paths are
 * relative to the agent's working directory, as the incumbent's are.
 */
import * as fs from 'node:fs';
import type * as grpc from '@grpc/grpc-js';
import { grpcLibrary } from '../../shared/grpc-library';
import { DEFAULT_SDS_SOCKET_PATH } from '../bootstrap';
import { daemonServiceName } from '../../security/daemon-identity';
import { Backoff } from '../../shared/backoff';
import { UserError } from '../../shared/user-error';
import { CA_FIRST_CERTIFICATE_BACKOFF, CaClient } from './ca-client';
import { SdsServer } from './sds-server';
import { KeySpec } from './workload-key';
import { splitPems, WorkloadSecret, WorkloadSecrets } from './workload-secrets';


export interface AgentSecurityOptions {
  /** CA_ADDR, else the discovery address. */
  caAddress: string;
  /** CA_ROOT_CA / XDS_ROOT_CA: files with the roots the daemon's certificate must chain to. */
  caRootPath: string;
  xdsRootPath: string;
  /** MESHD_SAN, else a host name of the address, else the daemon's service name. */
  serverName: string;
  keySpec: KeySpec;
  tokenPath: string;
  trustDomain: string;
  graceRatio: number;
  outputDir?: string;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
}

export class AgentSecurityError extends UserError {}

/**
 * The name the daemon's certificate is checked against: MESHD_SAN, else the discovery
 * address's host, else (an IP address) the daemon's service in the system namespace.
 */
export function daemonServerName(address: string, meshdSan: string | undefined, systemNamespace: string): string {
  if (meshdSan) return meshdSan;
  const host = address.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  const isIp = /^[\d.]+$/.test(host) || host.includes(':');
  return isIp ? daemonServiceName(systemNamespace) : host;
}

function readRoots(path: string, what: string): string {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (err) {
    throw new AgentSecurityError(`${what}: cannot read the root certificate ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); the daemon publishes it there, or set ${what}`);
  }
  if (splitPems(text).length === 0) throw new AgentSecurityError(`${what}: ${path} holds no PEM certificate`);
  return text;
}

const ROOTS_POLL_MS = 1000;

function readOptional(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

export class AgentSecurity {
  private rootsWatcher: (() => void) | undefined;
  readonly secrets: WorkloadSecrets;
  readonly sds: SdsServer;

  constructor(private readonly options: AgentSecurityOptions) {
    const ca = new CaClient({ address: options.caAddress, rootsPem: () => readRoots(options.caRootPath, 'CA_ROOT_CA'), serverName: options.serverName });
    this.secrets = new WorkloadSecrets({
      ca,
      keySpec: options.keySpec,
      tokenPath: options.tokenPath,
      trustDomain: options.trustDomain,
      validitySeconds: 0,
      graceRatio: options.graceRatio,
      publishedRootsPem: () => {
        try {
          return fs.readFileSync(options.caRootPath, 'utf8');
        } catch {
          return undefined;
        }
      },
      outputDir: options.outputDir,
      log: options.log,
    });
    this.sds = new SdsServer(DEFAULT_SDS_SOCKET_PATH, () => this.secrets.secret(), options.log);
    this.secrets.onChange(() => this.sds.secretsChanged());
  }

  /**
   * Gets the first certificate, retrying with backoff (the daemon may not be up yet) and
   * reporting each failure through `onWaiting`; then serves SDS.
   */
  async start(onWaiting: (reason: string) => void, stopped: () => boolean): Promise<WorkloadSecret | undefined> {
    await this.sds.start();
    this.watchPublishedRoots();
    const backoff = new Backoff(CA_FIRST_CERTIFICATE_BACKOFF);
    while (!stopped()) {
      try {
        return await this.secrets.start();
      } catch (err) {
        const reason = (err as grpc.ServiceError).details || (err as Error).message;
        onWaiting(reason);
        await new Promise((r) => setTimeout(r, backoff.next()));
      }
    }
    return undefined;
  }

  /** mTLS credentials toward the daemon with the current workload certificate. */
  xdsCredentials(): grpc.ChannelCredentials {
    const secret = this.secrets.secret();
    if (!secret) throw new AgentSecurityError('no workload certificate yet');
    return grpcLibrary().credentials.createSsl(Buffer.from(readRoots(this.options.xdsRootPath, 'XDS_ROOT_CA')), Buffer.from(secret.keyPem), Buffer.from(secret.certChainPem));
  }

  /**
   * A new root from the daemon (root rotation): re-issue now, so the certificate chains to the
   * new root while the old one is still trusted, and peers get the new bundle over SDS.
   */
  private watchPublishedRoots(): void {
    const file = this.options.caRootPath;
    let last = readOptional(file);
    this.rootsWatcher = () => {
      const now = readOptional(file);
      if (now === undefined || now === last) return;
      last = now;
      this.options.log('info', `the mesh roots in ${file} changed: renewing the workload certificate`);
      void this.secrets.rotate();
    };
    fs.watchFile(file, { interval: ROOTS_POLL_MS, persistent: false }, this.rootsWatcher);
  }

  async stop(): Promise<void> {
    if (this.rootsWatcher) fs.unwatchFile(this.options.caRootPath, this.rootsWatcher);
    this.secrets.stop();
    await this.sds.stop();
  }
}
