/**
 * `proxy-config log` against running proxies: reads each proxy's loggers (POST /logging, as
 * the reference asks), checks the names the change gives against them before changing anything,
 * then sends the change and keeps each proxy's answer. A proxy that fails does not stop the others.
 */
import { adminText } from './live';
import { checkLoggerNames, LevelChange, levelRequests, parseActiveLoggers } from './log-levels';
import { formatData } from './output';
import { ProxyPod } from './proxy-admin';

export interface PodLevels {
  pod: ProxyPod;
  /** The proxy's last `/logging` answer, as it printed it. */
  answer: string;
  levels: Map<string, string>;
}

export interface LevelsOutcome {
  done: PodLevels[];
  /** One line per proxy that failed, naming it. */
  errors: string[];
}

export async function applyLogLevels(pods: ProxyPod[], change: LevelChange): Promise<LevelsOutcome> {
  const outcome: LevelsOutcome = { done: [], errors: [] };
  const current = new Map<ProxyPod, string>();
  for (const pod of pods) {
    try {
      const answer = await adminText(pod.call, 'POST', '/logging', pod.source);
      checkLoggerNames(change, parseActiveLoggers(answer, pod.source), pod.source);
      current.set(pod, answer);
    } catch (err) {
      outcome.errors.push((err as Error).message);
    }
  }
  for (const [pod, listing] of current) {
    try {
      let answer = listing;
      for (const path of levelRequests(change)) answer = await adminText(pod.call, 'POST', path, pod.source);
      outcome.done.push({ pod, answer, levels: parseActiveLoggers(answer, pod.source) });
    } catch (err) {
      outcome.errors.push((err as Error).message);
    }
  }
  return outcome;
}

/** `short`: each proxy as `<pod>.<namespace>:` and its admin answer; json/yaml: levels by proxy. */
export function renderLogLevels(done: PodLevels[], output: 'short' | 'json' | 'yaml'): string {
  if (output === 'short') return done.map((d) => `${d.pod.name}.${d.pod.namespace}:\n${d.answer}`).join('');
  return formatData(Object.fromEntries(done.map((d) => [`${d.pod.name}.${d.pod.namespace}`, Object.fromEntries(d.levels)])), output);
}
