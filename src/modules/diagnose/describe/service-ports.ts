/** A Service's ports as they reach a pod: the pod port each targets, and the mesh protocol. */
import type { V1Pod, V1ServicePort } from '@kubernetes/client-node';
import { isHttpProtocol, Protocol } from '../../registry';
import { portProtocol } from '../../registry/orch/ports';

/** The mesh's protocol of the port (named, appProtocol, else TCP: the mesh does not sniff). */
export function servicePortProtocol(port: V1ServicePort): Protocol {
  return portProtocol({ name: port.name, protocol: port.protocol, appProtocol: port.appProtocol });
}

/** HTTP ports get the HTTP filter chain (its RBAC filter), others the TCP one. */
export function chainOf(port: V1ServicePort): 'http' | 'tcp' {
  return isHttpProtocol(servicePortProtocol(port)) ? 'http' : 'tcp';
}

/**
 * The pod port the Service port targets: a number as given (the Service port itself when
 * unset), a name looked up among the pod's container ports of the same protocol.
 */
export function targetPodPort(pod: V1Pod, port: V1ServicePort): number | { error: string } {
  const target = port.targetPort as unknown;
  if (target === undefined || target === null || target === '' || target === 0) return port.port;
  if (typeof target === 'number') return target;
  if (typeof target === 'string' && /^\d+$/.test(target)) return Number(target);
  const name = String(target);
  const protocol = port.protocol ?? 'TCP';
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c.ports ?? []) if (p.name === name && (p.protocol ?? 'TCP') === protocol) return p.containerPort;
  }
  return { error: `no container port named "${name}" (${protocol}) on the pod for Service port ${port.port}` };
}
