/**
 * The bootstrap file proxyless gRPC applications read (`GRPC_XDS_BOOTSTRAP`): their xDS server
 * is the agent's xDS proxy socket, their node is the agent's node with `GENERATOR: grpc` (so
 * the daemon sends gRPC's flavour of config), and with OUTPUT_CERTS their certificates are
 * the files the agent writes there. The agent writes it only when GRPC_XDS_BOOTSTRAP is set.
 *
 * The result is checked with `@grpc/grpc-js-xds`'s own bootstrap validator, so a file written
 * here is one that library accepts.
 */
import * as path from 'node:path';
import type { AdsNode } from '../../proxy/xds/xds-client';
import { writeFileAtomically } from './atomic-write';
import { BootstrapError } from './errors';

/** The listener name template of xDS-enabled gRPC servers (the daemon's gRPC generator serves these names). */
export const GRPC_SERVER_LISTENER_TEMPLATE = 'xds.mesh.io/grpc/lds/inbound/%s';

/** How often gRPC re-reads the certificate files. */
export const GRPC_CERT_REFRESH_INTERVAL = '900s';

export interface GrpcBootstrapOptions {
  /** The agent's node (`agentNode()`); its metadata gains `GENERATOR: grpc`. */
  node: AdsNode;
  /** The agent's xDS proxy socket; written as `unix://<absolute path>`. */
  xdsSocketPath: string;
  /** OUTPUT_CERTS: where the agent writes cert-chain.pem, key.pem and root-cert.pem; empty = no certificate provider. */
  outputCertsDir?: string;
}

export interface GrpcBootstrap {
  xds_servers: { server_uri: string; channel_creds: { type: string }[]; server_features: string[] }[];
  node: { id: string; cluster: string; locality: Record<string, string>; metadata: Record<string, unknown> };
  certificate_providers?: Record<string, { plugin_name: string; config: Record<string, string> }>;
  server_listener_resource_name_template: string;
}

export function buildGrpcBootstrap(options: GrpcBootstrapOptions): GrpcBootstrap {
  const bootstrap: GrpcBootstrap = {
    xds_servers: [{ server_uri: `unix://${path.resolve(options.xdsSocketPath)}`, channel_creds: [{ type: 'insecure' }], server_features: ['xds_v3'] }],
    node: {
      id: options.node.id,
      cluster: options.node.cluster,
      locality: {},
      metadata: { ...options.node.metadata, GENERATOR: 'grpc' },
    },
    server_listener_resource_name_template: GRPC_SERVER_LISTENER_TEMPLATE,
  };
  if (options.outputCertsDir) {
    // Absolute, so the application finds them whatever its working directory.
    const dir = path.resolve(options.outputCertsDir);
    bootstrap.certificate_providers = {
      default: {
        plugin_name: 'file_watcher',
        config: {
          certificate_file: path.join(dir, 'cert-chain.pem'),
          private_key_file: path.join(dir, 'key.pem'),
          ca_certificate_file: path.join(dir, 'root-cert.pem'),
          refresh_interval: GRPC_CERT_REFRESH_INTERVAL,
        },
      },
    };
  }
  return bootstrap;
}

interface XdsBootstrapModule {
  validateBootstrapConfig(obj: unknown): unknown;
}

/** Runs `@grpc/grpc-js-xds`'s validator over `bootstrap`; throws BootstrapError with its complaint. */
export function validateGrpcBootstrap(bootstrap: unknown, where = 'GRPC_XDS_BOOTSTRAP'): void {
  // Not part of the package's typed API, but the very function its xDS client loads bootstraps with.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const validator = require('@grpc/grpc-js-xds/build/src/xds-bootstrap') as XdsBootstrapModule;
  try {
    validator.validateBootstrapConfig(bootstrap);
  } catch (e) {
    throw new BootstrapError(`${where}: the gRPC bootstrap is not one @grpc/grpc-js-xds accepts: ${(e as Error).message}`);
  }
}

/** Builds, validates and writes the gRPC bootstrap to `file` (GRPC_XDS_BOOTSTRAP); returns the document. */
export function writeGrpcBootstrap(file: string, options: GrpcBootstrapOptions): GrpcBootstrap {
  const bootstrap = buildGrpcBootstrap(options);
  validateGrpcBootstrap(bootstrap, `GRPC_XDS_BOOTSTRAP ${file}`);
  writeFileAtomically(file, `${JSON.stringify(bootstrap, null, 2)}\n`, 'the gRPC bootstrap (GRPC_XDS_BOOTSTRAP)');
  return bootstrap;
}
