import * as grpc from '@grpc/grpc-js';
import * as protobuf from 'protobufjs';

const METHOD = '/mesh.v1.auth.MeshCertificateService/CreateCertificate';

/** `{csr=1, validity_duration=3}` → bytes; the wire shape of DESIGN.md §1 (metadata unused by the agent). */
function encodeRequest(csr: string, validitySeconds: number): Buffer {
  const w = protobuf.Writer.create();
  w.uint32((1 << 3) | 2).string(csr);
  if (validitySeconds > 0) w.uint32(3 << 3).int64(validitySeconds);
  return Buffer.from(w.finish());
}

function decodeResponse(bytes: Buffer): string[] {
  const r = protobuf.Reader.create(bytes);
  const chain: string[] = [];
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag >>> 3 === 1 && (tag & 7) === 2) chain.push(r.string());
    else r.skipType(tag & 7);
  }
  return chain;
}

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
    const creds = grpc.credentials.createSsl(
      Buffer.from(this.options.rootsPem()),
      credential.keyPem ? Buffer.from(credential.keyPem) : null,
      credential.certChainPem ? Buffer.from(credential.certChainPem) : null,
    );
    const client = new grpc.Client(address, creds, serverName ? { 'grpc.ssl_target_name_override': serverName, 'grpc.default_authority': serverName } : {});
    const metadata = new grpc.Metadata();
    if (credential.token) metadata.set('authorization', `Bearer ${credential.token}`);
    try {
      const response = await new Promise<Buffer>((resolve, reject) =>
        client.makeUnaryRequest(
          METHOD,
          (b: Buffer) => b,
          (b: Buffer) => b,
          encodeRequest(csrPem, validitySeconds),
          metadata,
          { deadline: Date.now() + timeoutMs },
          (err, value) => (err ? reject(err) : resolve(value as Buffer)),
        ),
      );
      const chain = decodeResponse(response);
      if (chain.length === 0) throw new Error('the CA answered with an empty certificate chain');
      return chain;
    } finally {
      client.close();
    }
  }
}
