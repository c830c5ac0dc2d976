/**
 * HTTP requests a filter makes on its own to a cluster (ext_authz checks its authorization
 * server this way): an endpoint picked like the router picks one, the cluster's transport
 * (mesh mTLS or plain text), a deadline, and the answer read whole up to a size limit.
 * Failures (no such cluster, no endpoint, connect error, timeout, oversized answer) reject
 * with an Error saying which, so the filter can apply its failure policy.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import type * as tls from 'node:tls';
import type { ClusterManager } from './cluster-manager';

export interface ClusterRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  timeoutMs: number;
}

export interface ClusterResponse {
  status: number;
  /** Lower-case names; repeated headers as lists. */
  headers: Record<string, string | string[]>;
  body: Buffer;
}

/** An endpoint of a cluster as a filter's own client (gRPC) connects to it. */
export interface ClusterTarget {
  address: string;
  port: number;
  /** The cluster's TLS toward the endpoint (mesh mTLS); undefined for plain text. */
  tls?: tls.ConnectionOptions;
}

/** What filters may use to reach a cluster (FilterContext.clusters). */
export interface ClusterHttpClient {
  request(cluster: string, request: ClusterRequest): Promise<ClusterResponse>;
  /** The next endpoint of the cluster, picked as the router picks one. @throws Error saying why there is none. */
  target(cluster: string): ClusterTarget;
}

/** An answer bigger than this is an error: a check response is a status and a few headers. */
const MAX_RESPONSE_BYTES = 1024 * 1024;

export class ClusterManagerHttpClient implements ClusterHttpClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

  constructor(private readonly clusters: ClusterManager) {}

  target(cluster: string): ClusterTarget {
    if (!this.clusters.cluster(cluster)) throw new Error(`cluster ${cluster} is not known`);
    const endpoint = this.clusters.pick(cluster);
    if (!endpoint) throw new Error(`no healthy upstream in cluster ${cluster}`);
    const transport = this.clusters.transportFor(cluster, endpoint);
    const tlsOptions = transport?.connectOptions();
    if (transport && !tlsOptions) throw new Error(`TLS secrets of cluster ${cluster} are not ready`);
    return { address: endpoint.address, port: endpoint.port, tls: tlsOptions };
  }

  request(cluster: string, request: ClusterRequest): Promise<ClusterResponse> {
    let target: ClusterTarget;
    try {
      target = this.target(cluster);
    } catch (err) {
      return Promise.reject(err);
    }
    const tlsOptions = target.tls;
    const headers = { ...request.headers, 'content-length': String(request.body?.length ?? 0) };
    const base = { host: target.address, port: target.port, method: request.method, path: request.path, headers };
    return new Promise((resolve, reject) => {
      const req = tlsOptions ? https.request({ ...base, ...tlsOptions, agent: false }) : http.request({ ...base, agent: this.agent });
      const timer = setTimeout(() => req.destroy(new Error(`no answer from cluster ${cluster} within ${request.timeoutMs} ms`)), request.timeoutMs);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let length = 0;
        res.on('data', (chunk: Buffer) => {
          length += chunk.length;
          if (length > MAX_RESPONSE_BYTES) req.destroy(new Error(`the answer of cluster ${cluster} is more than ${MAX_RESPONSE_BYTES} bytes`));
          else chunks.push(chunk);
        });
        res.on('end', () => {
          clearTimeout(timer);
          const out: Record<string, string | string[]> = {};
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k] = v;
          resolve({ status: res.statusCode ?? 502, headers: out, body: Buffer.concat(chunks) });
        });
        res.on('error', (err) => {
          clearTimeout(timer);
          reject(err);
        });
      });
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      req.end(request.body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
