import type * as undici from 'undici';
import { onFirstUse } from '../../shared/on-first-use';

/**
 * undici, loaded when the router opens its first upstream pool: loading it costs about 0.1 s
 * and 110 modules, which commands that proxy nothing (every meshctl command) should not pay.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const undiciLibrary = onFirstUse(() => require('undici') as typeof undici);
