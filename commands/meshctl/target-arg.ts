import { Args } from '@oclif/core';

/** The spec's pod argument: a pod, or `deployment/<name>`, optionally `.<namespace>`. */
export const TARGET_USAGE = '[<type>/]<name>[.<namespace>]';

/**
 * Optional: every command taking it has another way to pick its target (a config dump
 * file, a label selector, or all proxies), so the command decides when it is missing.
 */
export const targetArgs = {
  // ignoreStdin: oclif would otherwise take piped input (`... | meshctl ztunnel-config w -f -`) as the pod name.
  target: Args.string({ required: false, ignoreStdin: true, description: 'pod name, or deployment/<name>; append .<namespace> to pick the namespace' }),
};
