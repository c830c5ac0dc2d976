/**
 * JWT_RULE: the key set bearer tokens are checked against when no OIDC issuer
 * (TOKEN_ISSUER) is set. A JSON object in the shape of a RequestAuthentication jwtRule:
 * `{"issuer": "...", "jwksUri": "..." | "jwks": "<JWKS JSON>", "audiences": ["..."]}`;
 * inline `jwks` wins over `jwksUri` when both are given, as in RequestAuthentication.
 */
export interface JwtRule {
  readonly issuer: string;
  readonly jwksUri?: string;
  /** An inline JWKS document (JSON text). */
  readonly jwks?: string;
  /** When given, a token's `aud` must also contain one of these (on top of TOKEN_AUDIENCES). */
  readonly audiences?: readonly string[];
}

/**
 * @param name the setting the text came from, named in errors.
 * @throws Error naming `name` and what is wrong.
 */
export function parseJwtRule(text: string, name = 'JWT_RULE'): JwtRule {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${name} is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${name} must be a JSON object`);
  const rule = value as Record<string, unknown>;
  const known = new Set(['issuer', 'jwksUri', 'jwks', 'audiences']);
  const unknown = Object.keys(rule).filter((key) => !known.has(key));
  if (unknown.length > 0) throw new Error(`${name}: unknown field(s) ${unknown.join(', ')}; expected issuer, jwksUri, jwks, audiences`);
  if (typeof rule.issuer !== 'string' || rule.issuer === '') throw new Error(`${name}: "issuer" must be a non-empty string`);
  const optionalString = (field: string): string | undefined => {
    const v = rule[field];
    if (v === undefined || v === '') return undefined;
    if (typeof v !== 'string') throw new Error(`${name}: "${field}" must be a string`);
    return v;
  };
  const jwksUri = optionalString('jwksUri');
  const jwks = optionalString('jwks');
  if (!jwksUri && !jwks) throw new Error(`${name}: give "jwksUri" (where the key set is served) or "jwks" (the key set itself)`);
  if (jwksUri && !jwks) {
    const scheme = URL.canParse(jwksUri) ? new URL(jwksUri).protocol : '';
    if (scheme !== 'https:' && scheme !== 'http:') throw new Error(`${name}: "jwksUri" ${JSON.stringify(jwksUri)} is not an http(s) URL`);
  }
  if (jwks) checkJwks(jwks, name);
  let audiences: string[] | undefined;
  if (rule.audiences !== undefined) {
    if (!Array.isArray(rule.audiences) || rule.audiences.some((a) => typeof a !== 'string' || a === '')) {
      throw new Error(`${name}: "audiences" must be a list of non-empty strings`);
    }
    audiences = rule.audiences.length > 0 ? (rule.audiences as string[]) : undefined;
  }
  return { issuer: rule.issuer, jwksUri, jwks, audiences };
}

function checkJwks(jwks: string, name: string): void {
  let doc: unknown;
  try {
    doc = JSON.parse(jwks);
  } catch (err) {
    throw new Error(`${name}: "jwks" is not valid JSON: ${(err as Error).message}`);
  }
  const keys = (doc as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0) throw new Error(`${name}: "jwks" must be a JWKS document with a non-empty "keys" list`);
}
