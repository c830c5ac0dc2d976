import type * as k8s from '@kubernetes/client-node';
import { orchLibrary } from '../orch';
import { apiErrorMessage, statusCodeOf } from '../orch';
import { OrchAccess } from '../orch-access';
import { UserError } from '../shared/user-error';
import { OrchReach } from './daemon-session';

/** The ConfigMap the daemon publishes the mesh roots in (PILOT_CA_CERT_CONFIGMAP's default), and its key. */
export const ROOT_CERT_CONFIGMAP = 'mesh-ca-root-cert';
const ROOT_CERT_KEY = 'root-cert.pem';

/**
 * The orchestrator as meshctl's xDS commands reach it, through the reach layer: daemon pods by
 * label, local forwards to their xDS port (gRPC dials them: grpc-js takes no caller-made
 * connection, so a local listener whose connections each get a port-forward is the robust
 * way), TokenRequests, the published mesh roots, and the proxy's pod and admin port. The
 * OrchAccess is made on first use, so a command that needs none of this never loads an
 * orchestrator config; `close()` ends what it opened.
 */
export class OrchAccessReach implements OrchReach {
  private access: OrchAccess | undefined;

  constructor(private readonly makeAccess: () => OrchAccess) {}

  private get orch(): OrchAccess {
    this.access ??= this.makeAccess();
    return this.access;
  }

  async daemonPods(namespace: string, selector: string): Promise<Array<{ name: string; namespace: string }>> {
    return (await this.orch.podsBySelector(namespace, selector)).map((p) => ({ name: p.metadata!.name!, namespace: p.metadata!.namespace ?? namespace }));
  }

  async forward(pod: { name: string; namespace: string }, port: number): Promise<{ address: string; close(): Promise<void> }> {
    const local = await this.orch.forwarder.listen(pod, port, { address: '127.0.0.1', port: 0 });
    return { address: `127.0.0.1:${local.port}`, close: () => local.close() };
  }

  async token(namespace: string, serviceAccount: string, audiences: string[], expirationSeconds: number): Promise<string> {
    let answer: k8s.AuthenticationV1TokenRequest;
    try {
      answer = await this.orch.client.api(orchLibrary().CoreV1Api).createNamespacedServiceAccountToken({
        name: serviceAccount,
        namespace,
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences, expirationSeconds } },
      });
    } catch (err) {
      throw new UserError(apiErrorMessage(err));
    }
    const token = answer.status?.token;
    if (!token) throw new UserError('the TokenRequest was answered without a token');
    return token;
  }

  async meshRoots(namespace: string): Promise<string | undefined> {
    try {
      const map = await this.orch.client.api(orchLibrary().CoreV1Api).readNamespacedConfigMap({ name: ROOT_CERT_CONFIGMAP, namespace });
      return map.data?.[ROOT_CERT_KEY] || undefined;
    } catch (err) {
      // Not published, or not ours to read: the daemon goes unverified, as the incumbent always leaves it with a token.
      const code = statusCodeOf(err);
      if (code === 404 || code === 403) return undefined;
      throw new UserError(`cannot read the mesh roots (ConfigMap ${ROOT_CERT_CONFIGMAP} in namespace ${namespace}): ${apiErrorMessage(err)}`);
    }
  }

  async resolvePod(target: string, flagNamespace: string | undefined): Promise<{ name: string; namespace: string }> {
    const pod = await this.orch.resolvePod(target, this.orch.namespace(flagNamespace || undefined));
    return { name: pod.metadata!.name!, namespace: pod.metadata!.namespace! };
  }

  async podGet(pod: { name: string; namespace: string }, port: number, path: string): Promise<Buffer> {
    const answer = await this.orch.forwarder.request(pod, port, { method: 'GET', path });
    if (answer.status < 200 || answer.status > 299) {
      const text = answer.body.toString('utf8').trim().split('\n')[0]?.slice(0, 200) ?? '';
      throw new UserError(`GET ${path} on port ${port} of pod ${pod.name}.${pod.namespace} answered ${answer.status}${text ? `: ${text}` : ''}`);
    }
    return answer.body;
  }

  async close(): Promise<void> {
    await this.access?.close();
  }
}
