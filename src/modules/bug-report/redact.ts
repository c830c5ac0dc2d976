/** The value every secret datum gets unless `--full-secrets`. */
export const REDACTED = '<redacted>';

/** A Secret (as the API answers it) with each `data`/`stringData` value replaced, keys kept. */
export function redactSecret<T extends { data?: Record<string, string>; stringData?: Record<string, string>; metadata?: { annotations?: Record<string, string> } }>(secret: T): T {
  const copy = { ...secret };
  for (const field of ['data', 'stringData'] as const) {
    const values = secret[field];
    if (values) copy[field] = Object.fromEntries(Object.keys(values).map((k) => [k, REDACTED]));
  }
  // kubectl apply keeps the whole object, data included, in this annotation.
  const annotations = secret.metadata?.annotations;
  if (annotations?.['kubectl.kubernetes.io/last-applied-configuration']) {
    copy.metadata = { ...secret.metadata, annotations: { ...annotations, 'kubectl.kubernetes.io/last-applied-configuration': REDACTED } };
  }
  return copy;
}
