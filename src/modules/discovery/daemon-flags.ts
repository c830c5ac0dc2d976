/**
 * The flags of `pilot-discovery discovery` the daemon acts on, bound by the command in its
 * scope, and what the daemon's services read from them: listen addresses, TLS files and
 * ciphers, registries. Each is checked once, when the daemon is resolved.
 */
import { inject, injectable } from 'inversify';
import { ctrlzListenAddress } from '../ctrlz/address';
import { ListenAddress, parseListenAddress } from '../monitoring/listen-address';
import { RegistryOptions } from '../registry';
import { CipherSelection, cipherSelection } from '../security/tls/cipher-suites';
import { UserError } from '../shared/user-error';

export const DaemonFlagsToken = Symbol.for('mesh.DaemonFlags');
export interface DaemonFlags {
  configDir: string;
  registries: string[];
  domain: string;
  grpcAddr: string;
  httpAddr: string;
  monitoringAddr: string;
  keepaliveIntervalMs: number;
  keepaliveTimeoutMs: number;
  keepaliveMaxServerConnectionAgeMs: number;
  shutdownDurationMs: number;
  orchconfig: string;
  /** `--orchApiQPS` and `--orchApiBurst`: the orchestrator client's rate limit. */
  orchApiQPS: number;
  orchApiBurst: number;
  /** `--clusterID` when given; else the CLUSTER_ID setting. */
  clusterID?: string;
  /** `--namespace` when given; else the POD_NAMESPACE setting. */
  namespace?: string;
  secureGrpcAddr: string;
  httpsAddr: string;
  tlsCertFile: string;
  tlsKeyFile: string;
  caCertFile: string;
  tlsCipherSuites: string[];
  /** `--ctrlz_address` (`*` = all addresses) and `--ctrlz_port`: the introspection facility (ControlZ). */
  ctrlzAddress: string;
  ctrlzPort: number;
  /** `--profile`: CPU and heap profiles under `/debug/pprof/`. */
  profile: boolean;
}

/** The daemon cannot start as configured; the message names the flag or setting to fix. */
export class DaemonStartError extends UserError {}

/** The address flags, parsed (ListenAddressError names a malformed one); the TLS ones are absent when set empty. */
@injectable()
export class DaemonAddresses {
  readonly grpc: ListenAddress;
  readonly http: ListenAddress;
  readonly monitoring: ListenAddress;
  readonly secureGrpc: ListenAddress | undefined;
  readonly https: ListenAddress | undefined;
  readonly ctrlz: ListenAddress;

  constructor(@inject(DaemonFlagsToken) f: DaemonFlags) {
    this.grpc = parseListenAddress(f.grpcAddr, '--grpcAddr');
    this.http = parseListenAddress(f.httpAddr, '--httpAddr');
    this.monitoring = parseListenAddress(f.monitoringAddr, '--monitoringAddr');
    this.secureGrpc = f.secureGrpcAddr ? parseListenAddress(f.secureGrpcAddr, '--secureGRPCAddr') : undefined;
    this.https = f.httpsAddr ? parseListenAddress(f.httpsAddr, '--httpsAddr') : undefined;
    this.ctrlz = ctrlzListenAddress(f.ctrlzAddress, f.ctrlzPort);
  }
}

/** The daemon's own certificate files and TLS cipher suites (CipherSuiteError names an unknown suite). */
export const DaemonTlsFlagsToken = Symbol.for('mesh.DaemonTlsFlags');
export interface DaemonTlsFlags {
  tlsCertFile: string;
  tlsKeyFile: string;
  caCertFile: string;
  ciphers: CipherSelection;
}

@injectable()
export class DaemonTlsFromFlags implements DaemonTlsFlags {
  readonly tlsCertFile: string;
  readonly tlsKeyFile: string;
  readonly caCertFile: string;
  readonly ciphers: CipherSelection;

  constructor(@inject(DaemonFlagsToken) f: DaemonFlags) {
    this.tlsCertFile = f.tlsCertFile;
    this.tlsKeyFile = f.tlsKeyFile;
    this.caCertFile = f.caCertFile;
    this.ciphers = cipherSelection(f.tlsCipherSuites);
  }
}

/** `--registries` and `--domain` for the service registries. */
@injectable()
export class RegistriesFromFlags implements RegistryOptions {
  readonly registries: readonly string[];
  readonly domain: string;

  constructor(@inject(DaemonFlagsToken) f: DaemonFlags) {
    this.registries = f.registries;
    this.domain = f.domain;
  }
}
