import { ConfigResource } from './resource';

/** A problem found by a kind's own checks, relative to the resource (`spec.ports[0].number`). */
export interface FieldIssue {
  field: string;
  message: string;
}

/**
 * Something in a valid resource that probably does not do what its author meant. `type`
 * and `args` let tools present known warnings their own way (analyze gives them codes).
 */
export interface FieldWarning extends FieldIssue {
  type?: 'unreachable-rule' | 'ineffective-match';
  args?: readonly string[];
}

/** One resource kind of the mesh API: where it lives, its spec class and its semantic checks. */
export interface KindDefinition<S extends object = object> {
  kind: string;
  group: 'security.mesh.io' | 'networking.mesh.io';
  versions: readonly string[];
  /** class-validator class of `spec` (nested classes carry @ValidateNested and @Type). */
  specClass: new () => S;
  /** Checks across fields that decorators cannot express (sums, duplicates, references). */
  check?(resource: ConfigResource<S>): FieldIssue[];
  /** Warnings about a resource that passed its checks. */
  warn?(resource: ConfigResource<S>): FieldWarning[];
}

export const SECURITY_VERSIONS = ['v1', 'v1beta1'] as const;
export const NETWORKING_VERSIONS = ['v1', 'v1beta1', 'v1alpha3'] as const;
