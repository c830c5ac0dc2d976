/**
 * The mesh the sidecar mTLS tests run: service `shop` in `backend` (one workload at `serverIp`
 * with a sidecar and service account `shop`), clients in `frontend`, and the policies a test
 * adds. Without traffic capture the server's proxy listens on `serverIp:<port>` (DESIGN.md §7),
 * where the endpoint (workload address, target port) points, so the service port is the app's
 * port; clients bind their outbound listener on `clientBind`, since the app has 127.0.0.1:<port>.
 */
export function shopMeshYaml(o: { port: number; serverIp: string; clientBind: string; policies: string }): string {
  return `
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: shop, namespace: backend }
spec:
  hosts: [shop.backend.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{ number: ${o.port}, name: http, protocol: HTTP, targetPort: ${o.port} }]
  workloadSelector: { labels: { app: shop } }
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: shop-v1, namespace: backend }
spec: { address: ${o.serverIp}, serviceAccount: shop, labels: { app: shop, security.mesh.io/tlsMode: mesh } }
---
apiVersion: networking.mesh.io/v1
kind: Sidecar
metadata: { name: default, namespace: frontend }
spec:
  egress: [{ port: { number: ${o.port}, protocol: HTTP, name: http }, bind: ${o.clientBind}, hosts: ["backend/*"] }]
---
apiVersion: networking.mesh.io/v1
kind: Sidecar
metadata: { name: default, namespace: backend }
spec: { egress: [{ hosts: ["mesh-system/*"] }] }
---
${o.policies}
`;
}
