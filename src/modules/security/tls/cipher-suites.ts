/**
 * `--tls-cipher-suites` takes the IANA suite names the spec lists; Node's TLS (OpenSSL) names
 * TLS 1.2 suites differently, so each accepted name maps to OpenSSL's. TLS 1.3 suites keep
 * their IANA names in OpenSSL.
 */
import { UserError } from '../../shared/user-error';

const SECURE: Record<string, string> = {
  TLS_AES_128_GCM_SHA256: 'TLS_AES_128_GCM_SHA256',
  TLS_AES_256_GCM_SHA384: 'TLS_AES_256_GCM_SHA384',
  TLS_CHACHA20_POLY1305_SHA256: 'TLS_CHACHA20_POLY1305_SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
};

/** Accepted, but the spec flags them insecure: the daemon warns when one is chosen. */
const INSECURE: Record<string, string> = {
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: 'ECDHE-ECDSA-AES128-SHA256',
  TLS_ECDHE_ECDSA_WITH_RC4_128_SHA: 'ECDHE-ECDSA-RC4-SHA',
  TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA: 'ECDHE-RSA-DES-CBC3-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: 'ECDHE-RSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_RC4_128_SHA: 'ECDHE-RSA-RC4-SHA',
  TLS_RSA_WITH_3DES_EDE_CBC_SHA: 'DES-CBC3-SHA',
  TLS_RSA_WITH_AES_128_CBC_SHA: 'AES128-SHA',
  TLS_RSA_WITH_AES_128_CBC_SHA256: 'AES128-SHA256',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_CBC_SHA: 'AES256-SHA',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
  TLS_RSA_WITH_RC4_128_SHA: 'RC4-SHA',
};

/** A `--tls-cipher-suites` value the user can fix. */
export class CipherSuiteError extends UserError {}

export interface CipherSelection {
  /** Node `ciphers` option (TLS 1.2 suites), or undefined for Node's defaults. */
  ciphers?: string;
  /** Insecure names that were chosen, for a warning. */
  insecure: string[];
}

/** Maps `--tls-cipher-suites` values to Node's options; an unknown name is an error naming it. */
export function cipherSelection(names: readonly string[], flag = '--tls-cipher-suites'): CipherSelection {
  const chosen = names.map((n) => n.trim()).filter((n) => n !== '');
  if (chosen.length === 0) return { insecure: [] };
  const openssl: string[] = [];
  const insecure: string[] = [];
  for (const name of chosen) {
    const mapped = SECURE[name] ?? INSECURE[name];
    if (!mapped) throw new CipherSuiteError(`${flag}: unknown cipher suite "${name}" (known: ${Object.keys(SECURE).join(', ')})`);
    if (INSECURE[name]) insecure.push(name);
    openssl.push(mapped);
  }
  // OpenSSL takes TLS 1.2 and 1.3 suites in one `ciphers` string in Node (1.3 ones by IANA name).
  return { ciphers: openssl.join(':'), insecure };
}
