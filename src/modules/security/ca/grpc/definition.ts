/**
 * The gRPC definition of `mesh.v1.auth.MeshCertificateService`, loaded from
 * `protos/mesh/v1/auth/ca.proto` at the package root (shipped with the package, like the
 * xDS protos).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import { grpcLibrary } from '../../../shared/grpc-library';
import type * as protoLoader from '@grpc/proto-loader';

export const CA_SERVICE_NAME = 'mesh.v1.auth.MeshCertificateService';
const CA_PROTO = path.join('mesh', 'v1', 'auth', 'ca.proto');

/** A request as the service receives it (proto field names, int64 as a number). */
export interface MeshCertificateRequest {
  csr: string;
  validity_duration: number;
  metadata?: { fields?: Record<string, { string_value?: string; stringValue?: string; kind?: string }> } | null;
}

export interface MeshCertificateResponse {
  cert_chain: string[];
}

let definition: grpc.ServiceDefinition | undefined;

/** The service definition to `server.addService(caServiceDefinition(), createCertificateService(...))`. */
export function caServiceDefinition(): grpc.ServiceDefinition {
  if (!definition) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded when the CA first serves or is called, not at start-up
    const packageDefinition = (require('@grpc/proto-loader') as typeof protoLoader).loadSync(CA_PROTO, {
      includeDirs: [protosDir()],
      keepCase: true,
      longs: Number,
      defaults: true,
      oneofs: true,
    });
    definition = packageDefinition[CA_SERVICE_NAME] as grpc.ServiceDefinition;
    if (!definition) throw new Error(`${CA_PROTO} defines no ${CA_SERVICE_NAME}`);
  }
  return definition;
}

/** A client class for the service (`new (caClientConstructor())(address, credentials)`), for agents and tests. */
export function caClientConstructor(): grpc.ServiceClientConstructor {
  return grpcLibrary().makeGenericClientConstructor(caServiceDefinition(), 'MeshCertificateService');
}

/** `protos/` of the package: the nearest ancestor of this file that has the CA proto. */
function protosDir(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'protos');
    if (fs.existsSync(path.join(candidate, CA_PROTO))) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`cannot find protos/${CA_PROTO} above ${__dirname}`);
  }
}
