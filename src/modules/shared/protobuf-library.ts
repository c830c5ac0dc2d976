import type * as protobuf from 'protobufjs';
import { onFirstUse } from './on-first-use';

/**
 * protobufjs, loaded on first use: the protos are parsed when a message is first encoded or
 * decoded, so a command that encodes none (`--help`, `version --remote=false`) need not load
 * the library either. Files use its types with `import type * as protobuf from 'protobufjs'`
 * and its values through this.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const protobufLibrary = onFirstUse(() => require('protobufjs') as typeof protobuf);
