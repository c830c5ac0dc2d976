/**
 * The spec's pod argument `[<type>/]<name>[.<namespace>]` read without the orchestrator, as
 * the incumbent splits it: the namespace after the last dot, else `defaultNamespace`. A
 * target naming another kind (`deployment/<name>`) needs the orchestrator to find its pod.
 */
export function podOfTarget(target: string, defaultNamespace: string): { name: string; namespace: string } | undefined {
  const slash = target.indexOf('/');
  if (slash >= 0) {
    const kind = target.slice(0, slash).toLowerCase();
    if (kind !== 'pod' && kind !== 'pods' && kind !== 'po') return undefined;
    target = target.slice(slash + 1);
  }
  const dot = target.lastIndexOf('.');
  return dot > 0 ? { name: target.slice(0, dot), namespace: target.slice(dot + 1) } : { name: target, namespace: defaultNamespace };
}
