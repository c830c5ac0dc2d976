/** VirtualService header operations as Envoy header additions and removals, and Host rewrites. */
import { HeaderOperations } from '../../config/kinds/virtual-service';
import { EnvoyEnum } from './envoy-enums';

type Obj = Record<string, unknown>;

/** Two sets of header operations as one; the second's `set` and `add` win over the first's. */
export function mergeHeaderOps(a: HeaderOperations | undefined, b: HeaderOperations | undefined): HeaderOperations | undefined {
  if (!a) return b;
  if (!b) return a;
  return { set: { ...a.set, ...b.set }, add: { ...a.add, ...b.add }, remove: [...(a.remove ?? []), ...(b.remove ?? [])] };
}

function isHostHeader(name: string): boolean {
  const n = name.toLowerCase();
  return n === 'host' || n === ':authority';
}

/** A `set` of Host/:authority is a host rewrite, not a header operation. */
export function hostFromHeaders(ops: HeaderOperations | undefined): string | undefined {
  for (const [k, v] of Object.entries(ops?.set ?? {})) if (isHostHeader(k)) return v;
  return undefined;
}

function headerValueOptions(ops: HeaderOperations | undefined): Obj[] {
  const out: Obj[] = [];
  for (const [key, value] of Object.entries(ops?.set ?? {})) {
    if (!isHostHeader(key)) out.push({ header: { key, value }, append_action: EnvoyEnum.HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD });
  }
  for (const [key, value] of Object.entries(ops?.add ?? {})) out.push({ header: { key, value }, append_action: EnvoyEnum.HeaderAppendAction.APPEND_IF_EXISTS_OR_ADD });
  return out;
}

export function applyHeaderOps(target: Obj, request: HeaderOperations | undefined, response: HeaderOperations | undefined): void {
  const reqAdd = headerValueOptions(request);
  const resAdd = headerValueOptions(response);
  if (reqAdd.length) target.request_headers_to_add = reqAdd;
  if (request?.remove?.length) target.request_headers_to_remove = [...request.remove];
  if (resAdd.length) target.response_headers_to_add = resAdd;
  if (response?.remove?.length) target.response_headers_to_remove = [...response.remove];
}
