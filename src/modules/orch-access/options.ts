import type { OrchClientOptions } from '../orch';

/** meshctl's global flags that say how to reach the orchestrator API and as whom. */
export interface MeshctlOrchFlags {
  orchconfig?: string;
  context?: string;
  as?: string;
  'as-group'?: string[];
  'as-uid'?: string;
}

/** client-go's pacing for command-line tools (kubectl): 50 requests per second, bursts of 100. */
const CLI_QPS = 50;
const CLI_BURST = 100;

/** The orchestrator client options of a meshctl command, from its global flags. */
export function meshctlOrchOptions(flags: MeshctlOrchFlags): OrchClientOptions {
  const groups = (flags['as-group'] ?? []).filter((g) => g !== '');
  const impersonate = flags.as || flags['as-uid'] || groups.length ? { user: flags.as || undefined, groups: groups.length ? groups : undefined, uid: flags['as-uid'] || undefined } : undefined;
  return {
    orchconfig: flags.orchconfig ?? '',
    context: flags.context || undefined,
    qps: CLI_QPS,
    burst: CLI_BURST,
    ...(impersonate ? { impersonate } : {}),
  };
}
