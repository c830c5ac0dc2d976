import type * as jose from 'jose';
import { onFirstUse } from './on-first-use';

/**
 * jose, loaded when the first token is decoded or verified: most program starts handle no
 * JWT. Files use its types with `import type` and its functions through this.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const joseLibrary = onFirstUse(() => require('jose') as typeof jose);
