/** SPIFFE identities of workloads: `spiffe://<trust domain>/ns/<namespace>/sa/<service account>`. */
import { IdentityExtractionError } from '../errors';

export interface WorkloadIdentity {
  readonly trustDomain: string;
  readonly namespace: string;
  readonly serviceAccount: string;
}

const SPIFFE_ID = /^spiffe:\/\/([^/]+)\/ns\/([^/]+)\/sa\/([^/]+)$/;
const SERVICE_ACCOUNT_SUBJECT = /^system:serviceaccount:([^:]+):([^:]+)$/;

export function spiffeId(identity: WorkloadIdentity): string {
  return `spiffe://${identity.trustDomain}/ns/${identity.namespace}/sa/${identity.serviceAccount}`;
}

/** The parts of a workload SPIFFE ID; undefined for anything else. */
export function parseSpiffeId(id: string): WorkloadIdentity | undefined {
  const match = SPIFFE_ID.exec(id);
  return match ? { trustDomain: match[1], namespace: match[2], serviceAccount: match[3] } : undefined;
}

/**
 * The identity of a token subject in the orchestrator's form `system:serviceaccount:<ns>:<sa>`.
 * @throws IdentityExtractionError for any other subject.
 */
export function identityOfSubject(subject: unknown, trustDomain: string): string {
  const match = typeof subject === 'string' ? SERVICE_ACCOUNT_SUBJECT.exec(subject) : null;
  if (!match) {
    const shown = subject === undefined ? 'no "sub" claim' : `"sub" ${JSON.stringify(subject)}`;
    throw new IdentityExtractionError(`the token has ${shown}; expected system:serviceaccount:<namespace>:<service account>`);
  }
  return spiffeId({ trustDomain, namespace: match[1], serviceAccount: match[2] });
}
