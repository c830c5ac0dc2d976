import * as fs from 'node:fs';
import { ScopedLogger } from '../../logging';
import { Settings } from '../../settings';
import { ProxyConfig } from '../proxy-config';
import { AgentSecurityError, AgentSecurityOptions, daemonServerName } from './agent-security';
import { PUBLISHED_ROOTS_PATH } from '../../security/published-roots';
import { tokenPath } from './token';
import { keySpecFrom } from './workload-key';

/**
 * The agent's certificate settings, in the mesh config's trust domain. Certificates are required for MUTUAL_TLS to the daemon;
 * with controlPlaneAuthPolicy NONE they are fetched only when the workload has a token (so
 * its proxy can still do mTLS with its peers).
 */
export function agentSecurityOptions(
  settings: Settings,
  proxyConfig: ProxyConfig,
  log: ScopedLogger,
  mesh: { trustDomain: string; systemNamespace: string },
): AgentSecurityOptions | undefined {
  const token = tokenPath(settings.string('JWT_POLICY') ?? 'third-party-jwt', settings.string('MESH_JWT_PATH'));
  if (proxyConfig.controlPlaneAuthPolicy === 'NONE' && !fs.existsSync(token)) return undefined;
  const caAddress = settings.string('CA_ADDR') || proxyConfig.discoveryAddress;
  const graceRatio = settings.float('SECRET_GRACE_PERIOD_RATIO');
  if (!(graceRatio > 0 && graceRatio < 1)) throw new AgentSecurityError(`SECRET_GRACE_PERIOD_RATIO: ${graceRatio} must be between 0 and 1`);
  return {
    caAddress,
    caRootPath: settings.string('CA_ROOT_CA') || PUBLISHED_ROOTS_PATH,
    xdsRootPath: settings.string('XDS_ROOT_CA') || PUBLISHED_ROOTS_PATH,
    serverName: daemonServerName(caAddress, settings.string('MESHD_SAN'), mesh.systemNamespace),
    keySpec: keySpecFrom({
      eccSignatureAlgorithm: settings.string('ECC_SIGNATURE_ALGORITHM'),
      eccCurve: settings.string('ECC_CURVE') ?? 'P256',
      rsaKeySize: settings.int('WORKLOAD_RSA_KEY_SIZE'),
    }),
    tokenPath: token,
    trustDomain: mesh.trustDomain,
    graceRatio,
    outputDir: settings.string('OUTPUT_CERTS') || undefined,
    log: (level, message) => log[level](message),
  };
}
