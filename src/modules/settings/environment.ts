/**
 * The one place that reads the process environment. Everything else receives an
 * `Environment` (a plain name → value map) through the container, so tests can hand in
 * their own and no code depends on `process.env` directly.
 */
export type Environment = Readonly<Record<string, string | undefined>>;

export const Environment = Symbol.for('mesh.Environment');

export function processEnvironment(): Environment {
  return { ...process.env };
}
