import * as fs from 'node:fs';
import * as path from 'node:path';
import { X509Certificate } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import { grpcLibrary } from '../shared/grpc-library';
import { UserError } from '../shared/user-error';

/**
 * The transport security of meshctl's xDS connection to the daemon (spec/03, "Direct
 * connection to the control plane"): plain text with `--plaintext`; with `--cert-dir`, mutual
 * TLS with the client certificate found there (`cert-chain.pem`, `key.pem`, and
 * `root-cert.pem` to verify the daemon); otherwise TLS verified against the mesh roots, and a
 * token in the call's metadata. `--insecure` skips verifying the daemon, `--authority` names
 * the server name expected in its certificate.
 */

export class XdsSecurityError extends UserError {}

export interface XdsSecurityOptions {
  plaintext: boolean;
  insecure: boolean;
  authority?: string;
  certDir?: string;
  /**
   * Token security: the mesh roots that verify the daemon (published by it); when unknown,
   * the daemon is not verified, as the incumbent never verifies it with a token.
   */
  rootsPem?: string;
  /** The server name expected when none is given (`meshd.<namespace>.svc` for daemon pods). */
  defaultServerName?: string;
}

export interface ChannelSecurity {
  credentials: grpc.ChannelCredentials;
  options: grpc.ChannelOptions;
}

/** The files of a certificate directory, as the incumbent names them. */
export const CERT_DIR_FILES = { chain: 'cert-chain.pem', key: 'key.pem', roots: 'root-cert.pem' } as const;

export function channelSecurity(o: XdsSecurityOptions): ChannelSecurity {
  const serverName = o.authority || o.defaultServerName;
  const options: grpc.ChannelOptions = serverName ? { 'grpc.ssl_target_name_override': serverName, 'grpc.default_authority': serverName } : {};
  if (o.plaintext) return { credentials: grpcLibrary().credentials.createInsecure(), options: o.authority ? { 'grpc.default_authority': o.authority } : {} };
  let roots: Buffer | null = null;
  let key: Buffer | null = null;
  let chain: Buffer | null = null;
  if (o.certDir) {
    key = readCertFile(o.certDir, CERT_DIR_FILES.key);
    chain = readCertFile(o.certDir, CERT_DIR_FILES.chain);
    roots = readCertFile(o.certDir, CERT_DIR_FILES.roots, !o.insecure);
  } else if (o.rootsPem) {
    roots = Buffer.from(o.rootsPem);
  }
  const skipVerify = o.insecure || (!o.certDir && !o.rootsPem);
  const verifyOptions: grpc.VerifyOptions & { rejectUnauthorized?: boolean } = skipVerify ? { rejectUnauthorized: false, checkServerIdentity: () => undefined } : {};
  return { credentials: grpcLibrary().credentials.createSsl(roots, key, chain, verifyOptions), options };
}

function readCertFile(dir: string, name: string, required: true): Buffer;
function readCertFile(dir: string, name: string, required?: boolean): Buffer | null;
function readCertFile(dir: string, name: string, required = true): Buffer | null {
  const file = path.join(dir, name);
  try {
    return fs.readFileSync(file);
  } catch (err) {
    if (!required && (err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new XdsSecurityError(`--cert-dir: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/**
 * The namespace of the client certificate's mesh identity (its `spiffe://<td>/ns/<ns>/sa/<sa>`
 * URI), so the debug stream presents itself in the namespace the daemon checks it against.
 */
export function certificateNamespace(certDir: string): string | undefined {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(readCertFile(certDir, CERT_DIR_FILES.chain, true));
  } catch (err) {
    if (err instanceof XdsSecurityError) throw err;
    throw new XdsSecurityError(`--cert-dir: ${path.join(certDir, CERT_DIR_FILES.chain)} is not a PEM certificate: ${(err as Error).message}`);
  }
  const uris = (cert.subjectAltName ?? '').split(/,\s*/).filter((n) => n.startsWith('URI:')).map((n) => n.slice(4));
  for (const uri of uris) {
    const m = /^spiffe:\/\/[^/]+\/ns\/([^/]+)\/sa\/[^/]+$/.exec(uri);
    if (m) return m[1];
  }
  return undefined;
}
