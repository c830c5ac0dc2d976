/** `meshctl create-remote-secret`: a Secret giving the mesh's daemon access to this cluster's orchestrator API. */
export { createRemoteSecret, CreateRemoteSecretOptions } from './create-remote-secret';
export { CLUSTER_ANNOTATION, defaultSecretName, orchConfigText, remoteSecret, RemoteSecretSpec } from './secret-doc';
export { ensureReaderAccount, READER_RULES, serviceAccountToken } from './reader-account';
