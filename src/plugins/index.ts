import { PluginClass } from '../modules/plugins/decorator';

/**
 * The mesh's own feature plugins (one folder each under src/plugins/), bound like
 * third-party ones: only when their `enabledBy` setting is on.
 */
export const BUILT_IN_PLUGINS: PluginClass[] = [];
