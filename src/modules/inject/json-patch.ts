/**
 * An RFC 6902 JSON patch that turns `from` into `to` (what the injection webhook answers the
 * orchestrator with). Objects are diffed key by key, arrays element by element with additions
 * and removals at the end; anything else is replaced.
 */

export type PatchOp = { op: 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function pointer(parts: string[]): string {
  return parts.map((p) => '/' + p.replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equal(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && equal(a[k], b[k]));
  }
  return false;
}

export function createJsonPatch(from: unknown, to: unknown): PatchOp[] {
  const ops: PatchOp[] = [];
  diff(from, to, [], ops);
  return ops;
}

function diff(a: unknown, b: unknown, at: string[], ops: PatchOp[]): void {
  if (equal(a, b)) return;
  if (isObject(a) && isObject(b)) {
    for (const k of Object.keys(a)) if (!(k in b)) ops.push({ op: 'remove', path: pointer([...at, k]) });
    for (const [k, v] of Object.entries(b)) {
      if (!(k in a)) ops.push({ op: 'add', path: pointer([...at, k]), value: v });
      else diff(a[k], v, [...at, k], ops);
    }
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const common = Math.min(a.length, b.length);
    for (let i = 0; i < common; i++) diff(a[i], b[i], [...at, String(i)], ops);
    // Removals from the end first, so earlier indexes stay valid.
    for (let i = a.length - 1; i >= common; i--) ops.push({ op: 'remove', path: pointer([...at, String(i)]) });
    for (let i = common; i < b.length; i++) ops.push({ op: 'add', path: pointer([...at, '-']), value: b[i] });
    return;
  }
  if (at.length === 0) throw new Error('cannot patch a document into a different kind of document');
  ops.push({ op: 'replace', path: pointer(at), value: b });
}

/** Applies a patch made by createJsonPatch (for tests and for checking our own answers). */
export function applyJsonPatch<T>(doc: T, ops: readonly PatchOp[]): T {
  const root = { doc: structuredClone(doc) as unknown };
  for (const op of ops) {
    const parts = op.path
      .split('/')
      .slice(1)
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    let parent: unknown = root;
    let key: string = 'doc';
    for (const p of parts) {
      parent = (parent as Record<string, unknown>)[key];
      key = p;
    }
    if (Array.isArray(parent)) {
      const index = key === '-' ? parent.length : Number(key);
      if (op.op === 'remove') parent.splice(index, 1);
      else if (op.op === 'add') parent.splice(index, 0, op.value);
      else parent[index] = op.value;
    } else {
      const obj = parent as Record<string, unknown>;
      if (op.op === 'remove') delete obj[key];
      else obj[key] = op.value;
    }
  }
  return root.doc as T;
}
