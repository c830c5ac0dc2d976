import { createHash } from 'node:crypto';

const versions = new WeakMap<Buffer, string>();

/**
 * The delta-xDS version of a resource: a hash of its encoding, so an unchanged resource
 * keeps its version across pushes. Encoded bodies are shared between proxies, so the hash
 * is computed once per body.
 */
export function resourceVersion(body: Buffer): string {
  let v = versions.get(body);
  if (v === undefined) {
    v = createHash('sha1').update(body).digest('base64url').slice(0, 16);
    versions.set(body, v);
  }
  return v;
}
