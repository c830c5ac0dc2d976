import { encodeMessage } from '../envoy/protos';

/**
 * Encoded resources keep their identity across pushes when their bytes do not change.
 *
 * A push regenerates whatever its change may have touched (a route table after any service
 * change, every listener of a namespace...), and most of it comes out byte for byte as
 * before. Handing back the Buffer already sent lets the server see "unchanged" by identity,
 * once per proxy and resource, instead of comparing bytes thousands of times per push; the
 * per-body caches (framing, delta versions) keep their entries too.
 *
 * Per type and name, the last distinct bodies are remembered (proxies of different
 * namespaces may get different versions of one name). Weak references: a body no proxy
 * holds any more is not kept alive here.
 */
/**
 * Enough for one variant per scope of a mesh of many namespaces: a route table such as `8080`
 * is a different body in every namespace (same-namespace short names), and a variant pushed out
 * here comes back as a new Buffer, compared byte for byte against what every proxy holds.
 */
const VARIANTS_PER_NAME = 32;
const MAX_NAMES_PER_TYPE = 1_000_000;
const known = new Map<string, Map<string, WeakRef<Buffer>[]>>();

export function internBody(typeUrl: string, name: string, body: Buffer): Buffer {
  let byName = known.get(typeUrl);
  if (!byName) known.set(typeUrl, (byName = new Map()));
  const variants = byName.get(name);
  if (!variants) {
    // Names come from config, so this stays small; clear rather than grow without bound.
    if (byName.size >= MAX_NAMES_PER_TYPE) byName.clear();
    byName.set(name, [new WeakRef(body)]);
    return body;
  }
  for (let i = variants.length - 1; i >= 0; i--) {
    const old = variants[i].deref();
    if (old === undefined) variants.splice(i, 1);
    else if (old === body || old.equals(body)) return old;
  }
  variants.push(new WeakRef(body));
  if (variants.length > VARIANTS_PER_NAME) variants.shift();
  return body;
}

/** Encodes one named resource and interns its bytes (see internBody). */
export function encodeResource(typeUrl: string, name: string, message: object): Buffer {
  return internBody(typeUrl, name, encodeMessage(typeUrl, message));
}
