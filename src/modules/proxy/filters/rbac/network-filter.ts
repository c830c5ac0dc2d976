import type { ConnectionInfo, FilterContext, NetworkFilter, NetworkFilterFactory } from '../../http/filter-api';
import { RbacFilterConfig, parseRbacFilterConfig } from './filter-config';
import { connectionSubject } from './subject';
import { RBAC_NETWORK_TYPE } from '../../../envoy/well-known';

export const NETWORK_RBAC_TYPE_URL = RBAC_NETWORK_TYPE;

/** Envoy's network RBAC: the same engine over the connection alone; a deny closes it. */
export class RbacNetworkFilter implements NetworkFilter {
  constructor(readonly name: string, private readonly config: RbacFilterConfig, private readonly context: FilterContext) {}

  onConnection(connection: ConnectionInfo): 'continue' | 'close' {
    const subject = connectionSubject(connection);
    const peer = `${connection.remoteAddress}:${connection.remotePort}`;
    if (this.config.shadowRules) {
      const decision = this.config.shadowRules.decide(subject);
      this.context.log('debug', `${this.name}: ${peer} shadow ${decision.allowed ? 'allowed' : 'denied'}, matched policy ${decision.policyId ?? 'none'}`);
    }
    const rules = this.config.rules;
    if (!rules) return 'continue';
    const decision = rules.decide(subject);
    this.context.log('debug', `${this.name}: ${peer} enforced ${decision.allowed ? 'allowed' : 'denied'}, matched policy ${decision.policyId ?? 'none'}`);
    return decision.allowed ? 'continue' : 'close';
  }
}

export const rbacNetworkFilterFactory: NetworkFilterFactory = {
  typeUrl: NETWORK_RBAC_TYPE_URL,
  create(name, config, context) {
    return new RbacNetworkFilter(name, parseRbacFilterConfig(config, name), context);
  },
};
