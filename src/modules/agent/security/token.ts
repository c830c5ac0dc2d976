import * as fs from 'node:fs';
import { joseLibrary } from '../../shared/jose-library';
import { identityOfSubject } from '../../security/ca';
import { UserError } from '../../shared/user-error';

export class TokenError extends UserError {}

const POLICY_PATHS: Record<string, string> = {
  'third-party-jwt': './var/run/secrets/tokens/mesh-token',
  'first-party-jwt': './var/run/secrets/orch/serviceaccount/token',
};

/** The token file the agent presents to the CA: MESH_JWT_PATH, else the JWT_POLICY's path. */
export function tokenPath(jwtPolicy: string, override: string | undefined): string {
  if (override) return override;
  const path = POLICY_PATHS[jwtPolicy];
  if (!path) throw new TokenError(`JWT_POLICY: "${jwtPolicy}" is not known (use ${Object.keys(POLICY_PATHS).join(' or ')}, or set MESH_JWT_PATH)`);
  return path;
}

/** Reads the token fresh each time (the orchestrator rotates the file). */
export function readToken(path: string): string {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8').trim();
  } catch (err) {
    throw new TokenError(`cannot read the workload token ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (text === '') throw new TokenError(`the workload token ${path} is empty`);
  return text;
}

/** `system:serviceaccount:<ns>:<sa>` → `spiffe://<td>/ns/<ns>/sa/<sa>`, for the CSR's informative SAN. */
export function tokenIdentity(token: string, trustDomain: string): string | undefined {
  try {
    return identityOfSubject(joseLibrary().decodeJwt(token).sub, trustDomain);
  } catch {
    return undefined;
  }
}
