/** `major.minor` versions as precheck compares them (the orchestrator's, the mesh's, --from-version). */

export interface MinorVersion {
  major: number;
  minor: number;
}

/** `1.28`, `v1.28.3`, `1.28.0-beta.1` → 1.28; undefined when the text does not start so. */
export function parseMinorVersion(text: string): MinorVersion | undefined {
  const m = /^v?(\d+)\.(\d+)(?:[.+-]|$)/.exec(text.trim());
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : undefined;
}

/** Negative when a is older than b. */
export function compareVersions(a: MinorVersion, b: MinorVersion): number {
  return a.major - b.major || a.minor - b.minor;
}

export function formatVersion(v: MinorVersion): string {
  return `${v.major}.${v.minor}`;
}
