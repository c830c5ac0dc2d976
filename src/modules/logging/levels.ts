import { Program } from '../settings/types';

export const LEVELS = ['debug', 'info', 'warn', 'error', 'fatal', 'none'] as const;
export type Level = (typeof LEVELS)[number];

export function levelRank(level: Level): number {
  return LEVELS.indexOf(level);
}

export function isLevel(text: string): text is Level {
  return (LEVELS as readonly string[]).includes(text);
}

/** `all` is not a scope of its own: it addresses every scope at once. */
export const ALL_SCOPES = 'all';
export const DEFAULT_SCOPE = 'default';

/** The logging scopes each program accepts in its flags (spec/01 and spec/02). */
export const PROGRAM_SCOPES: Record<Program, readonly string[]> = {
  'pilot-discovery': [
    'ads', 'adsc', 'all', 'analysis', 'authn', 'authorization', 'ca', 'controllers', 'default', 'delta',
    'deltaadsc', 'file', 'fullpush', 'gateway', 'grpc', 'grpcgen', 'ip-autoallocate', 'klog', 'krt', 'orch',
    'model', 'monitor', 'monitoring', 'pkica', 'pkira', 'probes', 'processing', 'retry', 'rootcertrotator',
    'secretcontroller', 'security', 'serverca', 'serviceentry', 'spiffe', 'status', 'trustBundle', 'untaint',
    'validation', 'validationController', 'validationServer', 'wasm', 'wle',
  ],
  'pilot-agent': [
    'ads', 'all', 'ca', 'cache', 'caclient', 'default', 'dns', 'cloudcred', 'grpc', 'healthcheck', 'klog',
    'mockcred', 'monitoring', 'probes', 'sds', 'security', 'spiffe', 'validation', 'wasm', 'xdsproxy',
  ],
  'install-cni': [
    'ads', 'all', 'cni-agent', 'cni-plugin', 'controllers', 'default', 'grpc', 'klog', 'krt', 'model',
    'monitoring', 'spiffe', 'trustBundle', 'validation',
  ],
  // meshctl takes no logging flags; its messages go through the default scope.
  meshctl: ['all', 'default', 'klog'],
};
