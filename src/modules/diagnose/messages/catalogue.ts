/**
 * The message types precheck reports. Codes up to MSH0177 are the reference catalogue's
 * (conformance/analyze/messages.yaml), with its names, levels and templates; MSH09xx are this
 * mesh's own, for findings the catalogue has no message for.
 */
import type { MessageType } from './message';

export const INSUFFICIENT_PERMISSIONS: MessageType = {
  code: 'MSH0141',
  name: 'InsufficientPermissions',
  level: 'Error',
  template: 'Missing required permission to create resource %v (%v)',
};

export const UNSUPPORTED_ORCH_VERSION: MessageType = {
  code: 'MSH0142',
  name: 'UnsupportedKubernetesVersion',
  level: 'Error',
  template: 'The Kubernetes Version %q is lower than the minimum version: %v',
};

export const INVALID_APPLICATION_UID: MessageType = {
  code: 'MSH0144',
  name: 'InvalidApplicationUID',
  level: 'Warning',
  template: 'User ID (UID) 1337 is reserved for the sidecar proxy.',
};

export const MESH_INSTALLED: MessageType = {
  code: 'MSH0901',
  name: 'MeshInstalled',
  level: 'Info',
  template: 'The mesh control plane is installed in namespace %s (%s); installing again upgrades it.',
};

export const NO_CONTROL_PLANE_TO_UPGRADE: MessageType = {
  code: 'MSH0902',
  name: 'NoControlPlaneToUpgrade',
  level: 'Error',
  template: '--from-version %s was given, but no control plane%s is installed in namespace %s.',
};

export const CONTROL_PLANE_VERSION_MISMATCH: MessageType = {
  code: 'MSH0903',
  name: 'ControlPlaneVersionMismatch',
  level: 'Warning',
  template: 'The control plane runs version %s, not %s as --from-version says.',
};

export const UNSUPPORTED_UPGRADE: MessageType = {
  code: 'MSH0904',
  name: 'UnsupportedUpgrade',
  level: 'Warning',
  template: 'Upgrading from %s to %s %s.',
};

export const OTHER_MESH_RESOURCES: MessageType = {
  code: 'MSH0905',
  name: 'OtherMeshResources',
  level: 'Warning',
  template: 'The API group %s belongs to another service mesh; its resources are not read by this mesh, and its control plane may act on the same workloads.',
};

export const OTHER_MESH_INJECTOR: MessageType = {
  code: 'MSH0906',
  name: 'OtherMeshInjector',
  level: 'Error',
  template: 'Its webhook %s injects another service mesh\'s sidecar: pods both injectors select would get two proxies.',
};
