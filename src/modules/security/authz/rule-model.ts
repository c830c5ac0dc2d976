/**
 * One rule of an AuthorizationPolicy as an Envoy RBAC policy. A rule matches when any `from`
 * and any `to` match and every `when` holds, so each `from` becomes one principal (its fields
 * and the principal-side conditions ANDed) and each `to` one permission (likewise).
 */
import { AuthorizationRule, Operation, Source } from '../../config/kinds/authorization-policy';
import {
  AttributeGenerator,
  conditionAttribute,
  destinationPortAttribute,
  hostAttribute,
  methodAttribute,
  namespaceAttribute,
  pathAttribute,
  principalAttribute,
  remoteIpAttribute,
  requestPrincipalAttribute,
  serviceAccountAttribute,
  sourceIpAttribute,
  trustDomainAttribute,
} from './attributes';
import { Combinators, Permission, PERMISSION, Principal, PRINCIPAL, RbacAction, RbacPolicy } from './rbac-types';
import { TrustDomainBundle } from './trust-domain';

/** One attribute of a rule with the values it must (and must not) have. */
interface AttributeMatch<M> {
  key: string;
  values: readonly string[];
  notValues: readonly string[];
  generator: AttributeGenerator<M>;
}

/** An attribute that cannot be matched where the rule is used (an HTTP field on a TCP chain, a bad value). */
export class UnmatchableAttributeError extends Error {}

export class RuleModel {
  private constructor(
    /** One list per `to` (or one for the whole rule when it has none); each list is ANDed. */
    private readonly permissions: AttributeMatch<Permission>[][],
    /** One list per `from` (or one when none). */
    private readonly principals: AttributeMatch<Principal>[][],
  ) {}

  /**
   * Sorts the rule's attributes into permissions and principals, in the incumbent's order:
   * hosts, methods, paths, ports, then the permission-side conditions; principals, trust
   * domains, request principals, service accounts, namespaces, remote IPs, IPs, then the
   * principal-side conditions. Throws on an unknown condition key.
   */
  static of(rule: AuthorizationRule, policyNamespace: string, trustDomains: TrustDomainBundle): RuleModel {
    const basePermission: AttributeMatch<Permission>[] = [];
    const basePrincipal: AttributeMatch<Principal>[] = [];
    for (const c of rule.when ?? []) {
      const sided = conditionAttribute(c.key, policyNamespace);
      const values = c.values ?? [];
      const notValues = c.notValues ?? [];
      if (sided.side === 'permission') push(basePermission, c.key, values, notValues, sided.generator);
      else if (c.key === 'source.principal') push(basePrincipal, c.key, trustDomains.expandPrincipals(values), trustDomains.expandPrincipals(notValues), sided.generator);
      else push(basePrincipal, c.key, values, notValues, sided.generator);
    }
    const principals = (rule.from ?? []).map(({ source }) => [...sourceMatches(source, policyNamespace, trustDomains), ...basePrincipal]);
    const permissions = (rule.to ?? []).map(({ operation }) => [...operationMatches(operation), ...basePermission]);
    return new RuleModel(permissions.length > 0 ? permissions : [basePermission], principals.length > 0 ? principals : [basePrincipal]);
  }

  /**
   * The RBAC policy on an HTTP or a TCP chain. An attribute that cannot be matched there makes
   * an ALLOW rule unusable (thrown: leaving it out only allows less); in DENY and LOG rules it
   * is left out instead (the rule then denies or logs more, never less).
   */
  generate(forTcp: boolean, action: RbacAction): RbacPolicy {
    const lenient = action !== 'ALLOW';
    return {
      permissions: this.permissions.map((list) => conjunction(PERMISSION, list, forTcp, lenient)),
      principals: this.principals.map((list) => conjunction(PRINCIPAL, list, forTcp, lenient)),
    };
  }
}

function sourceMatches(s: Source | undefined, policyNamespace: string, trustDomains: TrustDomainBundle): AttributeMatch<Principal>[] {
  const out: AttributeMatch<Principal>[] = [];
  if (!s) return out;
  push(out, 'principals', trustDomains.expandPrincipals(s.principals ?? []), trustDomains.expandPrincipals(s.notPrincipals ?? []), principalAttribute);
  push(out, 'trustDomains', trustDomains.expandTrustDomains(s.trustDomains ?? []), trustDomains.expandTrustDomains(s.notTrustDomains ?? []), trustDomainAttribute);
  push(out, 'requestPrincipals', s.requestPrincipals, s.notRequestPrincipals, requestPrincipalAttribute);
  push(out, 'serviceAccounts', s.serviceAccounts, s.notServiceAccounts, serviceAccountAttribute(policyNamespace));
  push(out, 'namespaces', s.namespaces, s.notNamespaces, namespaceAttribute);
  push(out, 'remoteIpBlocks', s.remoteIpBlocks, s.notRemoteIpBlocks, remoteIpAttribute);
  push(out, 'ipBlocks', s.ipBlocks, s.notIpBlocks, sourceIpAttribute);
  return out;
}

function operationMatches(o: Operation | undefined): AttributeMatch<Permission>[] {
  const out: AttributeMatch<Permission>[] = [];
  if (!o) return out;
  push(out, 'hosts', o.hosts, o.notHosts, hostAttribute);
  push(out, 'methods', o.methods, o.notMethods, methodAttribute);
  push(out, 'paths', o.paths, o.notPaths, pathAttribute);
  push(out, 'ports', o.ports, o.notPorts, destinationPortAttribute);
  return out;
}

/** Attributes with neither values nor notValues say nothing and are left out. */
function push<M>(list: AttributeMatch<M>[], key: string, values: readonly string[] = [], notValues: readonly string[] = [], generator: AttributeGenerator<M>): void {
  if (values.length > 0 || notValues.length > 0) list.push({ key, values, notValues, generator });
}

/** Every attribute's matchers ANDed; nothing left to check matches anything. */
function conjunction<M>(c: Combinators<M>, list: readonly AttributeMatch<M>[], forTcp: boolean, lenient: boolean): M {
  const matchers = list.flatMap((a) => attributeMatchers(c, a, forTcp, lenient));
  return c.and(matchers.length > 0 ? matchers : [c.any()]);
}

/** `values` ORed, then NOT(`notValues` ORed); each part only when it produced something. */
function attributeMatchers<M>(c: Combinators<M>, a: AttributeMatch<M>, forTcp: boolean, lenient: boolean): M[] {
  const out: M[] = [];
  const positive = matcherOf(c, a, a.values, forTcp, lenient);
  if (positive) out.push(positive);
  const negative = matcherOf(c, a, a.notValues, forTcp, lenient);
  if (negative) out.push(c.not(negative));
  return out;
}

/** One matcher for `values`, or undefined when none could be built (lenient) or there are none. */
function matcherOf<M>(c: Combinators<M>, a: AttributeMatch<M>, values: readonly string[], forTcp: boolean, lenient: boolean): M | undefined {
  if (values.length === 0) return undefined;
  const attempt = (build: () => M): M | undefined => {
    try {
      if (forTcp && a.generator.httpOnly) throw new UnmatchableAttributeError(`${a.key} is HTTP only`);
      return build();
    } catch (err) {
      if (lenient) return undefined;
      throw err instanceof UnmatchableAttributeError ? err : new UnmatchableAttributeError(`${a.key}: ${(err as Error).message}`);
    }
  };
  const g = a.generator;
  if (g.all) return attempt(() => g.all(values));
  const built = values.map((v) => attempt(() => g.each(v))).filter((m): m is M => m !== undefined);
  return built.length === 0 ? undefined : c.or(built);
}
