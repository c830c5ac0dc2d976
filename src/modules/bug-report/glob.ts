/** A `*` glob (any run of characters; everything else literal) as an anchored RegExp. */
export function globRegExp(glob: string, flags = ''): RegExp {
  const body = glob
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`, flags);
}

/** Whether `text` matches one of `globs` (each anchored). */
export function matchesAny(globs: readonly RegExp[], text: string): boolean {
  return globs.some((g) => g.test(text));
}
