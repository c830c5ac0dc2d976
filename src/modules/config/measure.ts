import { CST, Document, isAlias, isMap, isNode, isPair, isScalar, isSeq, YAMLMap, YAMLSeq } from 'yaml';
import { ConfigFileLimits } from './limits';

/** A limit of ConfigFileLimits passed (or, with `syntax`, a duplicate key), at `offset` in the file. */
export class FileLimitExceeded extends Error {
  constructor(
    message: string,
    readonly offset: number,
    readonly syntax = false,
  ) {
    super(message);
  }
}

/** What aliases cost across one file, summed over its documents. */
export interface YamlCounts {
  aliases: number;
  /** Values the aliases add once expanded. */
  aliasExpansion: number;
}

/**
 * Where one document's syntax tree nests deeper than `maxDepth` collections, undefined when
 * it does not. Walked with a stack rather than recursion: the input is what may be hostile.
 */
export function nestedTooDeep(doc: CST.Document, maxDepth: number): number | undefined {
  const stack: Array<[CST.Token, number]> = doc.value ? [[doc.value, 0]] : [];
  while (stack.length > 0) {
    const [token, enclosing] = stack.pop()!;
    if (token.type !== 'block-map' && token.type !== 'block-seq' && token.type !== 'flow-collection') continue;
    const depth = enclosing + 1;
    if (depth > maxDepth) return token.offset;
    for (const item of token.items) {
      if (item.key) stack.push([item.key, depth]);
      if (item.value) stack.push([item.value, depth]);
    }
  }
  return undefined;
}

/** Values under a node, itself included, and how many collection levels it spans. */
interface Extent {
  size: number;
  height: number;
}

const SCALAR: Extent = { size: 1, height: 0 };

/**
 * Measures a composed document before any value is built from it: alias references and the
 * values they would add once expanded (`counts`, summed per file), nesting with aliases
 * expanded, aliases into their own anchor (a cycle), and duplicate mapping keys. Each
 * anchored node is measured once and reused by its aliases, so the cost is the document's
 * size, whatever the expansion would be. Throws FileLimitExceeded.
 */
export function measureDocument(doc: Document.Parsed, limits: ConfigFileLimits, counts: YamlCounts): void {
  const anchors = new Map<string, unknown>();
  const extents = new Map<unknown, Extent>();
  /** Anchored collections being walked: an alias to one of them is a cycle. */
  const open = new Set<unknown>();

  const walk = (node: unknown, enclosing: number): Extent => {
    if (isAlias(node)) {
      const offset = node.range?.[0] ?? 0;
      if (++counts.aliases > limits.maxAliases) throw new FileLimitExceeded(`more than ${limits.maxAliases} YAML alias references (the limit per file)`, offset);
      const target = anchors.get(node.source);
      if (target === undefined) return SCALAR; // the composer has reported the unknown anchor
      if (open.has(target)) throw new FileLimitExceeded(`the YAML alias *${node.source} refers to a node that contains it`, offset);
      const extent = extents.get(target)!;
      counts.aliasExpansion += extent.size;
      if (counts.aliasExpansion > limits.maxAliasExpansion) {
        throw new FileLimitExceeded(`YAML aliases expand to more than ${limits.maxAliasExpansion} values (the limit per file)`, offset);
      }
      if (enclosing + extent.height > limits.maxDepth) {
        throw new FileLimitExceeded(`nested more than ${limits.maxDepth} levels deep once aliases are expanded (the limit)`, offset);
      }
      return extent;
    }
    if (!isNode(node)) return SCALAR;
    const anchor = (node as { anchor?: string }).anchor;
    if (anchor) anchors.set(anchor, node);
    let extent = SCALAR;
    if (isMap(node) || isSeq(node)) {
      if (anchor) open.add(node);
      extent = walkCollection(node, enclosing + 1);
      if (anchor) open.delete(node);
    }
    if (anchor) extents.set(node, extent);
    return extent;
  };

  const walkCollection = (node: YAMLMap | YAMLSeq, depth: number): Extent => {
    const offset = node.range?.[0] ?? 0;
    if (depth > limits.maxDepth) throw new FileLimitExceeded(`nested more than ${limits.maxDepth} levels deep (the limit)`, offset);
    const keys = isMap(node) ? new Set<unknown>() : undefined;
    let size = 1;
    let height = 0;
    const add = (child: unknown) => {
      const extent = walk(child, depth);
      size += extent.size;
      height = Math.max(height, extent.height);
    };
    for (const item of node.items) {
      if (!isPair(item)) {
        add(item);
        continue;
      }
      if (keys && isScalar(item.key)) {
        if (keys.has(item.key.value)) throw new FileLimitExceeded('Map keys must be unique', item.key.range?.[0] ?? offset, true);
        keys.add(item.key.value);
      }
      add(item.key);
      add(item.value);
    }
    return { size, height: height + 1 };
  };

  if (doc.contents) walk(doc.contents, 0);
}
