import type { Duplex } from 'node:stream';
import { inject, injectable } from 'inversify';
import { OrchClient } from '../orch';
import { ForwardStream, openForward } from './forward-stream';
import { LocalForward, LocalForwardOptions, listenLocally } from './local-forward';
import { checkPort, PodLike, podRef } from './pod-ref';
import { DEFAULT_POD_HTTP_TIMEOUT_MS, podHttp, PodHttpRequest, PodHttpResponse } from './pod-http';

/**
 * Reaching a pod's port through the orchestrator API's port-forward, as `kubectl port-forward`
 * does: one connection (`connect`), one HTTP exchange (`request`), or a local listener whose
 * connections each get a forward (`listen`). `close` ends everything still open.
 */
@injectable()
export class PortForwarder {
  private readonly streams = new Set<ForwardStream>();
  private readonly listeners = new Set<LocalForward>();

  constructor(@inject(OrchClient) private readonly client: OrchClient) {}

  /**
   * A Duplex carrying the TCP stream of `port` inside `pod`. Rejects with a PortForwardError
   * (the API's message) when the API server refuses; the stream errs with one naming pod,
   * namespace and port when the port cannot be reached.
   */
  async connect(pod: PodLike, port: number, options: { timeoutMs?: number } = {}): Promise<Duplex> {
    const { name, namespace } = podRef(pod);
    const target = { pod: name, namespace, port: checkPort(port, 'pod port') };
    const kc = this.client.kubeConfig;
    await this.client.throttle();
    const stream = await openForward(kc, target, options.timeoutMs ?? DEFAULT_POD_HTTP_TIMEOUT_MS);
    this.streams.add(stream);
    stream.once('close', () => this.streams.delete(stream));
    return stream;
  }

  /** One HTTP/1.1 request to `port` of `pod` through its own forward; the whole answer, at most 64 MiB. */
  request(pod: PodLike, port: number, request: PodHttpRequest): Promise<PodHttpResponse> {
    const { name, namespace } = podRef(pod);
    const target = { pod: name, namespace, port: checkPort(port, 'pod port') };
    return podHttp(target, request, (timeoutMs) => this.connect(pod, port, { timeoutMs }));
  }

  /** A local listener (see LocalForward) forwarding each connection to `podPort` of `pod`. */
  async listen(pod: PodLike, podPort: number, options: LocalForwardOptions): Promise<LocalForward> {
    const { name, namespace } = podRef(pod);
    const target = { pod: name, namespace, port: checkPort(podPort, 'pod port') };
    const local = await listenLocally(target, options, () => this.connect(pod, podPort));
    this.listeners.add(local);
    return {
      ...local,
      close: async () => {
        this.listeners.delete(local);
        await local.close();
      },
    };
  }

  /** Closes every listener and forward made here. */
  async close(): Promise<void> {
    const listeners = [...this.listeners];
    this.listeners.clear();
    for (const stream of this.streams) stream.destroy();
    this.streams.clear();
    await Promise.all(listeners.map((l) => l.close()));
  }
}
