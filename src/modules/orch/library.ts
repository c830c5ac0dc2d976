import type * as k8s from '@kubernetes/client-node';
import { onFirstUse } from '../shared/on-first-use';

/**
 * @kubernetes/client-node, loaded on first use. Loading it costs about 0.3 s of CPU (it is a
 * large ES module), which commands that never reach the API server (`meshctl version
 * --remote=false`, `--help`, `analyze` of files) should not pay. Files use its types through
 * `import type` and its values (API classes, KubeConfig, Watch) through this, when they run.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const orchLibrary = onFirstUse(() => require('@kubernetes/client-node') as typeof k8s);
