/**
 * Envoy's TLS transport sockets for the built-in proxy: DownstreamTlsContext on inbound filter
 * chains and UpstreamTlsContext on clusters, with certificates inline or from SDS. Secure
 * contexts are rebuilt when a secret changes (renewal, root rotation).
 */
import * as tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import type { Decoded } from '../xds/xds-client';
import { compileStringMatcher } from '../filters/matchers/string-matcher';
import { pem, SecretStore, TlsSecret } from './secrets';
import { DOWNSTREAM_TLS_CONTEXT_TYPE, UPSTREAM_TLS_CONTEXT_TYPE } from '../../envoy/well-known';
import type { DownstreamTransport, TransportSocketFactory, UpstreamTransport } from './transport-sockets';

export const TLS_TRANSPORT = 'envoy.transport_sockets.tls';
const DOWNSTREAM_TYPE = DOWNSTREAM_TLS_CONTEXT_TYPE;
const UPSTREAM_TYPE = UPSTREAM_TLS_CONTEXT_TYPE;

/** Where a secret comes from: a name to fetch over SDS, or inline PEM. */
type SecretSource = { sds: string } | { inline: TlsSecret };

interface CommonTls {
  certificate?: SecretSource;
  validation?: SecretSource;
  alpn: string[];
  /** Peer SAN must match one of these (URI, DNS); empty = any verified peer. */
  sanMatchers: ((value: string) => boolean)[];
  /** `tls_params` protocol bounds, as Node names them; unset = Node's defaults. */
  minVersion?: tls.SecureVersion;
  maxVersion?: tls.SecureVersion;
}

/** envoy.extensions.transport_sockets.tls.v3.TlsParameters.TlsProtocol (name or number) → Node's name; TLS_AUTO is unset. */
function tlsVersionOf(value: unknown, field: string): tls.SecureVersion | undefined {
  const names: Record<string, tls.SecureVersion | undefined> = { TLS_AUTO: undefined, TLSv1_0: 'TLSv1', TLSv1_1: 'TLSv1.1', TLSv1_2: 'TLSv1.2', TLSv1_3: 'TLSv1.3' };
  const byNumber = ['TLS_AUTO', 'TLSv1_0', 'TLSv1_1', 'TLSv1_2', 'TLSv1_3'];
  if (value === undefined || value === null) return undefined;
  const name = typeof value === 'number' ? byNumber[value] : String(value);
  if (name === undefined || !(name in names)) throw new Error(`${field}: unknown TLS version ${JSON.stringify(value)}`);
  return names[name];
}

function compileCommon(common: Decoded | undefined, field: string): CommonTls {
  const c = common ?? {};
  const out: CommonTls = { alpn: ((c.alpn_protocols ?? []) as string[]).map(String), sanMatchers: [] };
  out.minVersion = tlsVersionOf(c.tls_params?.tls_minimum_protocol_version, `${field}.tls_params.tls_minimum_protocol_version`);
  out.maxVersion = tlsVersionOf(c.tls_params?.tls_maximum_protocol_version, `${field}.tls_params.tls_maximum_protocol_version`);
  const sdsCert = ((c.tls_certificate_sds_secret_configs ?? []) as Decoded[])[0];
  const inlineCert = ((c.tls_certificates ?? []) as Decoded[])[0];
  if (sdsCert) out.certificate = { sds: String(sdsCert.name) };
  else if (inlineCert) out.certificate = { inline: { certChainPem: pem(inlineCert.certificate_chain), keyPem: pem(inlineCert.private_key) } };
  let validation: Decoded | undefined;
  if (c.combined_validation_context) {
    validation = c.combined_validation_context.default_validation_context;
    const sds = c.combined_validation_context.validation_context_sds_secret_config;
    if (sds) out.validation = { sds: String(sds.name) };
  } else if (c.validation_context_sds_secret_config) {
    out.validation = { sds: String(c.validation_context_sds_secret_config.name) };
  } else if (c.validation_context) {
    validation = c.validation_context;
    const ca = pem(validation?.trusted_ca);
    if (ca) out.validation = { inline: { trustedCaPem: ca } };
  }
  const matchers = ((validation?.match_subject_alt_names ?? validation?.match_typed_subject_alt_names?.map((m: Decoded) => m.matcher) ?? []) as Decoded[]);
  out.sanMatchers = matchers.map((m, i) => compileStringMatcher(m, `${field}.match_subject_alt_names[${i}]`));
  return out;
}

/** Subject alternative names of a peer certificate, URIs first. */
export function peerSans(cert: X509Certificate | tls.PeerCertificate | undefined): string[] {
  const text = cert ? ('subjectAltName' in cert ? cert.subjectAltName : (cert as tls.PeerCertificate).subjectaltname) : undefined;
  if (!text) return [];
  const entries = text.split(', ').map((e) => e.trim());
  const uris = entries.filter((e) => e.startsWith('URI:')).map((e) => e.slice(4));
  const dns = entries.filter((e) => e.startsWith('DNS:')).map((e) => e.slice(4));
  return [...uris, ...dns];
}

abstract class TlsContextBase {
  private cached: { version: number; context: tls.SecureContext } | undefined;

  constructor(
    protected readonly common: CommonTls,
    protected readonly secrets: SecretStore,
  ) {
    for (const source of [common.certificate, common.validation]) if (source && 'sds' in source) secrets.want(source.sds);
  }

  /** The secure context from the current secrets; undefined while an SDS secret has not arrived. */
  secureContext(): tls.SecureContext | undefined {
    const version = this.secrets.version();
    if (this.cached?.version === version) return this.cached.context;
    const cert = this.resolve(this.common.certificate);
    const validation = this.resolve(this.common.validation);
    if ((this.common.certificate && !cert?.certChainPem) || (this.common.validation && !validation?.trustedCaPem)) return undefined;
    const context = tls.createSecureContext({
      cert: cert?.certChainPem,
      key: cert?.keyPem,
      ca: validation?.trustedCaPem,
      ...(this.common.minVersion ? { minVersion: this.common.minVersion } : {}),
      ...(this.common.maxVersion ? { maxVersion: this.common.maxVersion } : {}),
    });
    this.cached = { version, context };
    return context;
  }

  protected verifiesPeer(): boolean {
    return this.common.validation !== undefined;
  }

  /** Whether a verified peer's SANs satisfy the configured matchers. */
  protected sanAllowed(sans: string[]): boolean {
    return this.common.sanMatchers.length === 0 || sans.some((s) => this.common.sanMatchers.some((m) => m(s)));
  }

  private resolve(source: SecretSource | undefined): TlsSecret | undefined {
    if (!source) return undefined;
    return 'sds' in source ? this.secrets.get(source.sds) : source.inline;
  }
}

/** An inbound chain's TLS: terminates it and names the verified peer. */
export class DownstreamTls extends TlsContextBase implements DownstreamTransport {
  readonly requireClientCertificate: boolean;

  constructor(config: Decoded, secrets: SecretStore, field: string) {
    super(compileCommon(config.common_tls_context, `${field}.common_tls_context`), secrets);
    this.requireClientCertificate = Boolean(config.require_client_certificate?.value ?? config.require_client_certificate);
  }

  /**
   * Completes the handshake on `socket`; resolves with the TLS socket and the peer's first URI
   * SAN, or rejects (no secrets yet, handshake failed, client certificate missing or not allowed).
   */
  accept(socket: import('node:net').Socket): Promise<{ socket: tls.TLSSocket; peerPrincipal?: string }> {
    const secureContext = this.secureContext();
    if (!secureContext) return Promise.reject(new Error('TLS secrets have not arrived yet'));
    return new Promise((resolve, reject) => {
      const secure = new tls.TLSSocket(socket, {
        isServer: true,
        secureContext,
        requestCert: this.verifiesPeer(),
        rejectUnauthorized: this.requireClientCertificate,
        // Envoy goes on without ALPN when nothing matches; OpenSSL would abort the handshake, so
        // the client's first choice is echoed instead (mesh clients offer the mesh's own names).
        ALPNCallback: this.common.alpn.length ? ({ protocols }) => this.common.alpn.find((p) => protocols.includes(p)) ?? protocols[0] : undefined,
      });
      secure.once('error', reject);
      secure.once('secure', () => {
        secure.removeListener('error', reject);
        const peer = secure.getPeerCertificate();
        const hasPeer = Boolean(peer && Object.keys(peer).length > 0);
        // A TLSSocket made outside tls.Server is never marked `authorized`: check the chain here.
        const verifyError = hasPeer ? verifyErrorOf(secure) : undefined;
        if (this.requireClientCertificate && (!hasPeer || verifyError)) {
          secure.destroy();
          reject(new Error(hasPeer ? `client certificate rejected: ${verifyError}` : 'no client certificate'));
          return;
        }
        const sans = hasPeer && !verifyError ? peerSans(peer) : [];
        if (this.requireClientCertificate && !this.sanAllowed(sans)) {
          secure.destroy();
          reject(new Error(`peer ${sans.join(', ') || '(no SAN)'} is not allowed`));
          return;
        }
        resolve({ socket: secure, peerPrincipal: sans.find((s) => s.startsWith('spiffe://')) ?? sans[0] });
      });
    });
  }
}

/** OpenSSL's verdict on the peer's chain (undefined = verified), as tls.Server computes it. */
function verifyErrorOf(socket: tls.TLSSocket): string | undefined {
  const handle = (socket as unknown as { _handle?: { verifyError(): Error | null } })._handle;
  const err = handle?.verifyError();
  return err ? ((err as NodeJS.ErrnoException).code ?? err.message) : undefined;
}

/** A cluster's TLS toward its endpoints. */
export class UpstreamTls extends TlsContextBase implements UpstreamTransport {
  readonly sni?: string;

  constructor(config: Decoded, secrets: SecretStore, field: string) {
    super(compileCommon(config.common_tls_context, `${field}.common_tls_context`), secrets);
    this.sni = config.sni ? String(config.sni) : undefined;
  }

  /** `tls.connect` options for an endpoint; undefined while an SDS secret has not arrived. */
  connectOptions(): tls.ConnectionOptions | undefined {
    const secureContext = this.secureContext();
    if (!secureContext) return undefined;
    return {
      secureContext,
      servername: this.sni,
      ALPNProtocols: this.common.alpn.length ? this.common.alpn : undefined,
      rejectUnauthorized: this.verifiesPeer(),
      // The mesh checks the peer's identity (SAN), not a host name.
      checkServerIdentity: (_host, cert) => (this.sanAllowed(peerSans(cert)) ? undefined : new Error(`upstream identity ${peerSans(cert).join(', ') || '(none)'} is not allowed`)),
    };
  }
}

/** The core's transport socket: Envoy's TLS, terminating on inbound chains and originating toward clusters. */
export const TLS_TRANSPORT_SOCKETS: readonly TransportSocketFactory[] = [
  { typeUrl: DOWNSTREAM_TYPE, downstream: (config, { secrets, field }) => new DownstreamTls(config, secrets, field) },
  { typeUrl: UPSTREAM_TYPE, upstream: (config, { secrets, field }) => new UpstreamTls(config, secrets, field) },
];
