/**
 * Orders strings by code unit, as the reference (Go) compares them, not by locale. Sorting by
 * several keys: `byKeys(a, b, x => [x.namespace, x.name])`.
 */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function byKeys<T>(keys: (item: T) => string[]): (a: T, b: T) => number {
  return (a, b) => {
    const ka = keys(a);
    const kb = keys(b);
    for (let i = 0; i < ka.length; i++) {
      const c = compareStrings(ka[i], kb[i]);
      if (c !== 0) return c;
    }
    return 0;
  };
}

/** The reference filters names case-insensitively (Go's strings.EqualFold). */
export const equalFold = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();
