/**
 * Node authorization (CA_TRUSTED_NODE_ACCOUNTS): a node agent running as a trusted service
 * account may ask for the certificate of another identity, but only of one whose workload
 * runs on the agent's own node. The node is the one named in the caller's token
 * (`kubernetes.io.node.name`); which identities run on a node is the registry's answer.
 */
import { PermissionDeniedError } from '../errors';
import { Caller } from './authenticator';
import { parseSpiffeId } from './spiffe';

export interface NodeAccount {
  readonly namespace: string;
  readonly serviceAccount: string;
}

/** The identities of the workloads running on `node`. */
export type IdentitiesOnNode = (node: string) => ReadonlySet<string>;

export interface NodeAuthorizerOptions {
  trustDomain: string;
  trustedNodeAccounts: readonly NodeAccount[];
  identitiesOnNode?: IdentitiesOnNode;
}

export class NodeAuthorizer {
  constructor(private readonly options: NodeAuthorizerOptions) {}

  /**
   * The identities to certify for `caller` asking for `requested`.
   * @throws PermissionDeniedError saying why the caller may not have it.
   */
  authorize(caller: Caller, requested: string): string[] {
    if (caller.identities.includes(requested)) return [requested];
    if (!caller.identities.some((identity) => this.isTrustedNodeAccount(identity))) {
      throw new PermissionDeniedError(
        `${caller.identities.join(', ')} may not request a certificate for ${requested}: only the node accounts of CA_TRUSTED_NODE_ACCOUNTS may impersonate`,
      );
    }
    const node = caller.nodeName;
    if (!node) throw new PermissionDeniedError(`cannot impersonate ${requested}: the caller's credential names no node (token claim kubernetes.io.node.name)`);
    const onNode = this.options.identitiesOnNode?.(node);
    if (!onNode) throw new PermissionDeniedError(`cannot impersonate ${requested}: the CA does not know which workloads run on node ${node}`);
    if (!onNode.has(requested)) throw new PermissionDeniedError(`cannot impersonate ${requested}: no workload with that identity runs on node ${node}`);
    return [requested];
  }

  private isTrustedNodeAccount(identity: string): boolean {
    const parsed = parseSpiffeId(identity);
    return (
      parsed !== undefined &&
      parsed.trustDomain === this.options.trustDomain &&
      this.options.trustedNodeAccounts.some((account) => account.namespace === parsed.namespace && account.serviceAccount === parsed.serviceAccount)
    );
  }
}

/**
 * CA_TRUSTED_NODE_ACCOUNTS: comma-separated `<namespace>/<service account>`.
 * @throws Error naming `name` and the entry that is not of that form.
 */
export function parseNodeAccounts(text: string, name = 'CA_TRUSTED_NODE_ACCOUNTS'): NodeAccount[] {
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      const match = /^([^/\s]+)\/([^/\s]+)$/.exec(entry);
      if (!match) throw new Error(`${name}: "${entry}" is not <namespace>/<service account>`);
      return { namespace: match[1], serviceAccount: match[2] };
    });
}
