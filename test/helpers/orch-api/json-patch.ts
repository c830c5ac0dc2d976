import { isDeepStrictEqual } from 'node:util';
import { ApiError, badRequest } from './errors';

/*
 * RFC 7386 JSON merge patch and RFC 6902 JSON patch, on plain JSON values. Both work on a
 * copy: the caller's document is never changed.
 */

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** RFC 7386: objects merge, null removes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

interface Operation {
  op?: unknown;
  path?: unknown;
  from?: unknown;
  value?: unknown;
}

/** RFC 6902: add, remove, replace, move, copy, test. Errors are the real server's kinds (422 for a path that is not there). */
export function jsonPatch(document: unknown, operations: unknown): unknown {
  if (!Array.isArray(operations)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let doc = structuredClone(document);
  for (const raw of operations) {
    if (!isObject(raw)) throw badRequest('a JSON patch operation must be an object');
    const op = raw as Operation;
    if (typeof op.path !== 'string') throw unprocessable(`missing path in operation ${JSON.stringify(op.op)}`);
    const path = pointer(op.path);
    switch (op.op) {
      case 'add':
        doc = addAt(doc, path, structuredClone(op.value));
        break;
      case 'remove':
        doc = removeAt(doc, path);
        break;
      case 'replace':
        getAt(doc, path);
        doc = setAt(doc, path, structuredClone(op.value));
        break;
      case 'move': {
        const from = pointer(String(op.from ?? ''));
        const value = getAt(doc, from);
        doc = addAt(removeAt(doc, from), path, value);
        break;
      }
      case 'copy':
        doc = addAt(doc, path, structuredClone(getAt(doc, pointer(String(op.from ?? '')))));
        break;
      case 'test':
        if (!isDeepStrictEqual(getAt(doc, path), op.value)) throw unprocessable(`testing value ${op.path} failed: test failed`);
        break;
      default:
        throw unprocessable(`Unexpected kind: ${String(op.op)}`);
    }
  }
  return doc;
}

function unprocessable(message: string): ApiError {
  return new ApiError(422, 'Invalid', message);
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw unprocessable(`JSON pointer ${JSON.stringify(path)} does not start with "/"`);
  return path
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function missing(tokens: string[]): ApiError {
  return unprocessable(`doc is missing path: "/${tokens.join('/')}": missing value`);
}

function child(node: unknown, token: string, at: string[]): unknown {
  if (Array.isArray(node)) {
    if (!/^\d+$/.test(token) || Number(token) >= node.length) throw missing(at);
    return node[Number(token)];
  }
  if (isObject(node) && Object.prototype.hasOwnProperty.call(node, token)) return node[token];
  throw missing(at);
}

function getAt(doc: unknown, tokens: string[]): unknown {
  return tokens.reduce<unknown>((node, t, i) => child(node, t, tokens.slice(0, i + 1)), doc);
}

function parentOf(doc: unknown, tokens: string[]): unknown {
  return getAt(doc, tokens.slice(0, -1));
}

function addAt(doc: unknown, tokens: string[], value: unknown): unknown {
  if (tokens.length === 0) return value;
  const parent = parentOf(doc, tokens);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) {
    const i = last === '-' ? parent.length : /^\d+$/.test(last) ? Number(last) : NaN;
    if (!(i <= parent.length)) throw missing(tokens);
    parent.splice(i, 0, value);
  } else if (isObject(parent)) {
    parent[last] = value;
  } else {
    throw missing(tokens);
  }
  return doc;
}

function setAt(doc: unknown, tokens: string[], value: unknown): unknown {
  if (tokens.length === 0) return value;
  const parent = parentOf(doc, tokens);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) parent[Number(last)] = value;
  else (parent as Record<string, unknown>)[last] = value;
  return doc;
}

function removeAt(doc: unknown, tokens: string[]): unknown {
  if (tokens.length === 0) return undefined;
  getAt(doc, tokens);
  const parent = parentOf(doc, tokens);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else delete (parent as Record<string, unknown>)[last];
  return doc;
}
