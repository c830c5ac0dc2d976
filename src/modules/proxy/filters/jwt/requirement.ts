import { asList, asObject, fail, has, isObject, oneofMember, requiredString } from '../shared/config';
import { authenticate, VerifyContext } from './authenticator';
import { TokenExtractor } from './extractor';
import { AudienceCheck, JwtProvider } from './provider';
import { JwtStatus, Status } from './status';

/** A compiled JwtRequirement. */
export interface Verifier {
  verify(context: VerifyContext): Promise<JwtStatus>;
}

const KINDS = ['provider_name', 'provider_and_audiences', 'requires_any', 'requires_all', 'allow_missing_or_failed', 'allow_missing'] as const;

/** `provider_name` / `provider_and_audiences`: that provider's locations, its token must verify. */
class ProviderVerifier implements Verifier {
  private readonly extractor: TokenExtractor;

  constructor(private readonly provider: JwtProvider, private readonly providers: readonly JwtProvider[], private readonly audiences?: AudienceCheck) {
    this.extractor = new TokenExtractor([provider]);
  }

  verify(context: VerifyContext): Promise<JwtStatus> {
    this.extractor.sanitize(context.request.headers);
    const tokens = this.extractor.extract(context.request);
    return authenticate(context, { tokens, provider: this.provider, providers: this.providers, audiences: this.audiences, allowFailed: false, allowMissing: false });
  }
}

/** `allow_missing` / `allow_missing_or_failed`: every provider's locations; the token's issuer picks the provider. */
class AnyProviderVerifier implements Verifier {
  private readonly extractor: TokenExtractor;

  constructor(private readonly providers: readonly JwtProvider[], private readonly allowFailed: boolean) {
    this.extractor = new TokenExtractor(providers);
  }

  verify(context: VerifyContext): Promise<JwtStatus> {
    this.extractor.sanitize(context.request.headers);
    const tokens = this.extractor.extract(context.request);
    return authenticate(context, { tokens, providers: this.providers, allowFailed: this.allowFailed, allowMissing: true });
  }
}

/**
 * `requires_any`: OK as soon as one child is. Otherwise Envoy's pick of the error: a "real"
 * failure over an unknown issuer over a missing token; `allow_missing(_or_failed)` members turn
 * a missing token (or any failure) into OK.
 */
class AnyVerifier implements Verifier {
  constructor(private readonly children: readonly Verifier[], private readonly allowMissing: boolean, private readonly allowMissingOrFailed: boolean) {}

  async verify(context: VerifyContext): Promise<JwtStatus> {
    let result: JwtStatus = Status.JwtMissed;
    for (const child of this.children) {
      const status = await child.verify(context);
      if (status === Status.Ok) return Status.Ok;
      if ((status !== Status.JwtMissed && status !== Status.JwtUnknownIssuer) || result === Status.JwtMissed) result = status;
    }
    if (this.allowMissingOrFailed) return Status.Ok;
    if (this.allowMissing && result === Status.JwtMissed) return Status.Ok;
    return result;
  }
}

/** `requires_all`: every child must pass; the first failure answers. */
class AllVerifier implements Verifier {
  constructor(private readonly children: readonly Verifier[]) {}

  async verify(context: VerifyContext): Promise<JwtStatus> {
    for (const child of this.children) {
      const status = await child.verify(context);
      if (status !== Status.Ok) return status;
    }
    return Status.Ok;
  }
}

const ALLOW_ALL: Verifier = { verify: async () => Status.Ok };

/** Builds the verifier of a JwtRequirement against the configured providers. */
export function compileRequirement(value: unknown, field: string, providers: ReadonlyMap<string, JwtProvider>): Verifier {
  const requirement = asObject(value, field);
  const all = [...providers.values()];
  if (!KINDS.some((k) => has(requirement, k))) return ALLOW_ALL;
  const kind = oneofMember(requirement, KINDS, field);
  const at = `${field}.${kind}`;
  const providerNamed = (name: string, where: string): JwtProvider => providers.get(name) ?? fail(where, `provider ${JSON.stringify(name)} is not configured`);
  switch (kind) {
    case 'provider_name':
      return new ProviderVerifier(providerNamed(requiredString(requirement.provider_name, at), at), all);
    case 'provider_and_audiences': {
      const spec = asObject(requirement.provider_and_audiences, at);
      const provider = providerNamed(requiredString(spec.provider_name, `${at}.provider_name`), `${at}.provider_name`);
      const audiences = asList(spec.audiences, `${at}.audiences`).map((a, i) => requiredString(a, `${at}.audiences[${i}]`));
      return new ProviderVerifier(provider, all, audiences.length > 0 ? new AudienceCheck(audiences) : undefined);
    }
    case 'allow_missing':
      return new AnyProviderVerifier(all, false);
    case 'allow_missing_or_failed':
      return new AnyProviderVerifier(all, true);
    case 'requires_all': {
      const list = listOf(requirement.requires_all, at);
      return new AllVerifier(list.map((r, i) => compileRequirement(r, `${at}.requirements[${i}]`, providers)));
    }
    default: {
      const list = listOf(requirement.requires_any, at);
      const isAllowMissing = (r: unknown): boolean => isObject(r) && has(r, 'allow_missing');
      const isAllowFailed = (r: unknown): boolean => isObject(r) && has(r, 'allow_missing_or_failed');
      const children = list
        .map((r, i) => ({ r, i }))
        .filter(({ r }) => !isAllowMissing(r) && !isAllowFailed(r))
        .map(({ r, i }) => compileRequirement(r, `${at}.requirements[${i}]`, providers));
      const allowMissing = list.some(isAllowMissing);
      const allowFailed = list.some(isAllowFailed);
      // Only "allow" members: they stand for themselves.
      if (children.length === 0 && (allowMissing || allowFailed)) children.push(new AnyProviderVerifier(all, allowFailed));
      return new AnyVerifier(children, allowMissing, allowFailed);
    }
  }
}

function listOf(value: unknown, field: string): unknown[] {
  const list = asList(asObject(value, field).requirements, `${field}.requirements`);
  if (list.length === 0) fail(`${field}.requirements`, 'needs at least one requirement');
  return list;
}
