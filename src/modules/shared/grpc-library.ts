import type * as grpc from '@grpc/grpc-js';
import { onFirstUse } from './on-first-use';

/**
 * @grpc/grpc-js, loaded on first use: the servers, clients and credentials that need it are
 * made after start-up, and commands that talk to no daemon (`--help`, `version
 * --remote=false`, files only) should not pay for loading it. Files use its types with
 * `import type * as grpc from '@grpc/grpc-js'` and its values through this.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const grpcLibrary = onFirstUse(() => require('@grpc/grpc-js') as typeof grpc);
