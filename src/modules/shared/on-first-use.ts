/**
 * A value made on the first call and kept. For the libraries a program should load only when
 * a command uses them (`const jose = onFirstUse(() => require('jose') as typeof import('jose'))`,
 * then `jose().decodeJwt(...)`): what a module imports at its top is paid by every program
 * start, whether the command uses it or not.
 */
export function onFirstUse<T>(make: () => T): () => T {
  let made = false;
  let value: T;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value;
  };
}
