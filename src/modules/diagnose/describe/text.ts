/** Output helpers shared by the describe sections: the incumbent's indentation steps and object names. */

/** Indentation of the three levels the incumbent prints at. */
export const LEVEL0 = 0;
export const LEVEL1 = 3;
export const LEVEL2 = 6;

export const SEPARATOR = '--------------------';

export function spaces(n: number): string {
  return ' '.repeat(n);
}

/** `name` when the object is in the namespace the user looks from, else `name.namespace` (the mesh's pod naming). */
export function kname(meta: { name?: string; namespace?: string } | undefined, viewerNamespace: string): string {
  const name = meta?.name ?? '';
  const namespace = meta?.namespace ?? '';
  return namespace === viewerNamespace ? name : `${name}.${namespace}`;
}

/** Lines written in order; `text()` ends with a newline when anything was written. */
export class Lines {
  private readonly lines: string[] = [];

  add(line: string, indent = 0): void {
    this.lines.push(spaces(indent) + line);
  }

  get length(): number {
    return this.lines.length;
  }

  text(): string {
    return this.lines.length ? this.lines.join('\n') + '\n' : '';
  }
}
