import { Args } from '@oclif/core';

/** The spec's pod argument: a pod, or `deployment/<name>`, optionally `.<namespace>`. */
export const TARGET_USAGE = '[<type>/]<name>[.<namespace>]';

/**
 * Optional: every command taking it has another way to pick its target (a config dump
 * file, a label selector, or all proxies), so the command decides when it is missing.
 */
export const targetArgs = {
  target: Args.string({ required: false, description: 'pod name, or deployment/<name>; append .<namespace> to pick the namespace' }),
};
