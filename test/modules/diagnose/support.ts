import { Logging } from '../../../src/modules/logging';
import { defaultLoggingOptions } from '../../../src/modules/logging/options';
import { OrchClient } from '../../../src/modules/orch';
import type { OrchApiServer } from '../../helpers/orch-api';

/** A real client of the test API server, as meshctl makes one (no rate limit, silent logs). */
export function orchClient(kubeconfig: string): OrchClient {
  const logging = new Logging('meshctl');
  logging.configure({ ...defaultLoggingOptions('meshctl'), defaultOutputLevel: 'none' });
  return new OrchClient({ orchconfig: kubeconfig, qps: 0, burst: 0 }, logging);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

/** Creates a pod and gives it the status a kubelet would (Running, ready, an IP). */
export async function runningPod(server: OrchApiServer, pod: Any, status: Any = {}): Promise<Any> {
  const created = await server.create({ apiVersion: 'v1', kind: 'Pod', ...pod });
  return server.update({
    ...created,
    status: {
      phase: 'Running',
      podIP: '10.244.0.10',
      hostIP: '172.18.0.2',
      containerStatuses: (pod.spec?.containers ?? []).map((c: Any) => ({ name: c.name, ready: true, image: c.image ?? 'app', imageID: '', restartCount: 0 })),
      ...status,
    },
  });
}
