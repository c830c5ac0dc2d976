import { injectable } from 'inversify';
import { Proxy } from '../../model/proxy';
import { PushContext } from '../../model/push-context';
import { encodeResource } from '../../model/body-interning';
import { TypeUrl } from '../../envoy/type-urls';
import { GenerateRequest, XdsGenerator, XdsResource } from '../../model/generator';
import { sidecarScope } from '../sidecar/scope';
import { wantsNameTable } from '../../model/nds-eligibility';
import { buildNameTable } from './name-table';

/** The one NDS resource of a proxy is named `''`. */
export const NAME_TABLE_RESOURCE = '';

/**
 * NDS: the name table for proxies whose agent runs the DNS proxy; none for the others. One
 * encoded table is shared by every proxy with the same scope, namespace and network in a push.
 */
@injectable()
export class NameTableGenerator implements XdsGenerator {
  generate(request: GenerateRequest): XdsResource[] {
    const { push, proxy, names } = request;
    if (request.typeUrl !== TypeUrl.NameTable || !wantsNameTable(proxy)) return [];
    if (names && !names.includes(NAME_TABLE_RESOURCE)) return [];
    return [{ name: NAME_TABLE_RESOURCE, body: this.encoded(push, proxy) }];
  }

  private encoded(push: PushContext, proxy: Proxy): Buffer {
    // The table depends on the services in scope, the proxy's namespace (short names) and network (endpoints).
    const scope = proxy.type === 'router' ? `router|${proxy.namespace}` : sidecarScope(push, proxy).key;
    const key = `nds/${scope}/${proxy.namespace}/${proxy.metadata.NETWORK ?? ''}`;
    return push.memoize(key, () => encodeResource(TypeUrl.NameTable, NAME_TABLE_RESOURCE, buildNameTable(push, proxy)));
  }
}

/**
 * A generator that serves the name table itself and everything else from `inner`: NDS is
 * the agent's, whatever proxy (Envoy, the built-in proxy, a plugin's) the agent runs.
 */
export function withNameTable(inner: XdsGenerator, names: NameTableGenerator): XdsGenerator {
  return {
    generate: (request) => (request.typeUrl === TypeUrl.NameTable ? names.generate(request) : inner.generate(request)),
  };
}
