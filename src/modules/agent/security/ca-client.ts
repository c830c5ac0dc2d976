import type * as grpc from '@grpc/grpc-js';
import { grpcLibrary } from '../../shared/grpc-library';
import { BackoffOptions } from '../../shared/backoff';
import { caClientConstructor, MeshCertificateRequest, MeshCertificateResponse } from '../../security/ca';

type CreateCertificate = (
  request: MeshCertificateRequest,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (err: grpc.ServiceError | null, value?: MeshCertificateResponse) => void,
) => void;

/** Retries of the first certificate: the workload is not ready without it, so keep them close. */
export const CA_FIRST_CERTIFICATE_BACKOFF: BackoffOptions = { initialMs: 250, maxMs: 2000 };
/** Retries of a renewal: the current certificate still serves, so back off further. */
export const CA_RENEWAL_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 60_000 };

export interface CaClientOptions {
  /** `host:port` of the CA (CA_ADDR, else the discovery address). */
  address: string;
  /** Roots the CA's serving certificate must chain to. */
  rootsPem: () => string;
  /** Name the CA certificate is checked against (MESHD_SAN), when the address is an IP. */
  serverName?: string;
}

export interface CaCredential {
  token?: string;
  /** The current workload certificate, for renewal without a token. */
  keyPem?: string;
  certChainPem?: string;
}

/** Client of `mesh.v1.auth.MeshCertificateService/CreateCertificate` over TLS. */
export class CaClient {
  constructor(private readonly options: CaClientOptions) {}

  async createCertificate(csrPem: string, validitySeconds: number, credential: CaCredential, timeoutMs = 10_000): Promise<string[]> {
    const { address, serverName } = this.options;
    const creds = grpcLibrary().credentials.createSsl(
      Buffer.from(this.options.rootsPem()),
      credential.keyPem ? Buffer.from(credential.keyPem) : null,
      credential.certChainPem ? Buffer.from(credential.certChainPem) : null,
    );
    const Client = caClientConstructor();
    const client = new Client(address, creds, serverName ? { 'grpc.ssl_target_name_override': serverName, 'grpc.default_authority': serverName } : {});
    const metadata = new (grpcLibrary().Metadata)();
    if (credential.token) metadata.set('authorization', `Bearer ${credential.token}`);
    const request: MeshCertificateRequest = { csr: csrPem, validity_duration: Math.max(0, validitySeconds) };
    try {
      const response = await new Promise<MeshCertificateResponse>((resolve, reject) =>
        (client as unknown as Record<string, CreateCertificate>).CreateCertificate(request, metadata, { deadline: Date.now() + timeoutMs }, (err, value) =>
          err ? reject(err) : resolve(value as MeshCertificateResponse),
        ),
      );
      const chain = response.cert_chain ?? [];
      if (chain.length === 0) throw new Error('the CA answered with an empty certificate chain');
      return chain;
    } finally {
      client.close();
    }
  }
}
