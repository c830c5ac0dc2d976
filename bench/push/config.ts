/**
 * The generated mesh: N ServiceEntries `svc-<i>.ns-<i % 10>.svc.cluster.local` (STATIC, an
 * HTTP port 8080 and a TCP port 9000, selecting their WorkloadEntries), 2–3 WorkloadEntries
 * each, and a DestinationRule (two subsets) plus VirtualService (90/10 split) for ~10% of them.
 *
 * Layout: services/svc-<i>.yaml, workloads/svc-<i>.yaml, routing/svc-<i>.yaml, so a push edits
 * exactly one file of one kind.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ClientSpec } from './protocol';

export const NAMESPACES = 10;
const DOMAIN = 'cluster.local';

export interface Workload {
  service: number;
  /** Index of the WorkloadEntry within its service. */
  k: number;
  address: string;
}

export interface MeshLayout {
  dir: string;
  services: number;
  workloads: Workload[];
  routed: number;
  files: number;
}

export function namespaceOf(i: number): string {
  return `ns-${i % NAMESPACES}`;
}

export function hostOf(i: number): string {
  return `svc-${i}.${namespaceOf(i)}.svc.${DOMAIN}`;
}

function workloadCount(i: number): number {
  return 2 + (i % 2);
}

function workloadAddress(i: number, k: number): string {
  return `10.${1 + Math.floor(i / 250)}.${i % 250}.${10 + k}`;
}

/** ~10% of the services, spread over every namespace, get a DestinationRule and a VirtualService. */
function isRouted(i: number): boolean {
  return i % 10 === Math.floor(i / 10) % 10;
}

export function serviceEntryYaml(i: number, extraPort = false): string {
  const ports = [
    '    - { number: 8080, name: http, protocol: HTTP }',
    '    - { number: 9000, name: tcp, protocol: TCP }',
    ...(extraPort ? ['    - { number: 8081, name: http-alt, protocol: HTTP }'] : []),
  ];
  return `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata:
  name: svc-${i}
  namespace: ${namespaceOf(i)}
spec:
  hosts: ["${hostOf(i)}"]
  location: MESH_INTERNAL
  resolution: STATIC
  ports:
${ports.join('\n')}
  workloadSelector:
    labels: { app: svc-${i} }
`;
}

/** The WorkloadEntries of service i; `moved` relocates entry k to `movedTo`. */
export function workloadEntriesYaml(i: number, moved?: { k: number; to: string }): string {
  const docs: string[] = [];
  for (let k = 0; k < workloadCount(i); k++) {
    const address = moved && moved.k === k ? moved.to : workloadAddress(i, k);
    docs.push(`apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata:
  name: svc-${i}-${k}
  namespace: ${namespaceOf(i)}
spec:
  address: ${address}
  labels: { app: svc-${i}, version: v${k === 0 ? 1 : 2} }
  serviceAccount: svc-${i}
  locality: region-1/zone-${k % 3}
`);
  }
  return docs.join('---\n');
}

function routingYaml(i: number): string {
  const host = hostOf(i);
  return `apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata:
  name: svc-${i}
  namespace: ${namespaceOf(i)}
spec:
  host: ${host}
  trafficPolicy:
    connectionPool:
      tcp: { maxConnections: 100 }
      http: { http1MaxPendingRequests: 64, maxRetries: 3 }
    outlierDetection: { consecutive5xxErrors: 5, interval: 10s, baseEjectionTime: 30s }
  subsets:
    - { name: v1, labels: { version: v1 } }
    - { name: v2, labels: { version: v2 } }
---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata:
  name: svc-${i}
  namespace: ${namespaceOf(i)}
spec:
  hosts: ["${host}"]
  http:
    - match: [{ headers: { x-canary: { exact: "true" } } }]
      route: [{ destination: { host: ${host}, subset: v2 } }]
    - route:
        - { destination: { host: ${host}, subset: v1 }, weight: 90 }
        - { destination: { host: ${host}, subset: v2 }, weight: 10 }
      timeout: 5s
      retries: { attempts: 3, perTryTimeout: 2s, retryOn: "5xx,reset" }
`;
}

export function generateMesh(dir: string, services: number): MeshLayout {
  for (const sub of ['services', 'workloads', 'routing']) fs.mkdirSync(path.join(dir, sub), { recursive: true });
  const workloads: Workload[] = [];
  let routed = 0;
  let files = 0;
  for (let i = 0; i < services; i++) {
    fs.writeFileSync(path.join(dir, 'services', `svc-${i}.yaml`), serviceEntryYaml(i));
    fs.writeFileSync(path.join(dir, 'workloads', `svc-${i}.yaml`), workloadEntriesYaml(i));
    files += 2;
    if (isRouted(i)) {
      fs.writeFileSync(path.join(dir, 'routing', `svc-${i}.yaml`), routingYaml(i));
      routed += 1;
      files += 1;
    }
  }
  // k-major order: the first entry of every service, then the second, then the third.
  for (let k = 0; k < 3; k++) for (let i = 0; i < services; i++) if (k < workloadCount(i)) workloads.push({ service: i, k, address: workloadAddress(i, k) });
  return { dir, services, workloads, routed, files };
}

/**
 * Client c is the sidecar of workload c (so it has inbound config too, as real sidecars do);
 * clients beyond the workloads get addresses of their own (10.250.x.y) in namespace c % 10.
 */
export function clientSpecs(layout: MeshLayout, clients: number): ClientSpec[] {
  const out: ClientSpec[] = [];
  for (let c = 0; c < clients; c++) {
    const w = layout.workloads[c];
    if (w) out.push({ index: c, ip: w.address, namespace: namespaceOf(w.service), pod: `svc-${w.service}-${w.k}` });
    else out.push({ index: c, ip: `10.250.${Math.floor(c / 250) % 256}.${(c % 250) + 1}`, namespace: namespaceOf(c), pod: `client-${c}` });
  }
  return out;
}

/**
 * The WorkloadEntry the endpoint push moves: one no client stands for, so the push concerns
 * every proxy's EDS only. `ownerIsClient` says when there was no such entry.
 */
export function endpointTarget(layout: MeshLayout, clients: number): { workload: Workload; ownerIsClient: boolean } {
  const free = layout.workloads.length > clients ? layout.workloads[layout.workloads.length - 1] : undefined;
  return free ? { workload: free, ownerIsClient: false } : { workload: layout.workloads[0], ownerIsClient: true };
}

/** Writes the way editors do: a hidden temporary file renamed over the original. */
export function writeAtomically(file: string, text: string): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.tmp-${process.pid}`);
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}
