/**
 * A value made on the first call and kept. For the libraries a program should load only when
 * a command uses them (`const lib = onFirstUse(() => require('lib') as typeof import('lib'))`,
 * then `lib().fn(...)`; grpc-library.ts and the others here): what a module imports at its top
 * is paid by every program start, whether the command uses it or not.
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
