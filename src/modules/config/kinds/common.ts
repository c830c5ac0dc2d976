import { isIP } from 'node:net';
import { ValidationOptions, registerDecorator, ValidationArguments } from 'class-validator';

/** A DNS name, optionally with a leading `*.` wildcard, or `*` alone (the incumbent's host syntax). */
export function isMeshHost(value: unknown): boolean {
  if (typeof value !== 'string' || value === '' || value.length > 255) return false;
  if (value === '*') return true;
  const name = value.startsWith('*.') ? value.slice(2) : value;
  return name.split('.').every((label) => /^[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?$/.test(label));
}

export function isIPOrCIDR(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const [ip, bits, extra] = value.split('/');
  if (extra !== undefined || !isIP(ip)) return false;
  if (bits === undefined) return true;
  const max = isIP(ip) === 4 ? 32 : 128;
  return /^\d+$/.test(bits) && Number(bits) <= max;
}

function simple(name: string, test: (v: unknown) => boolean, message: string) {
  return (options?: ValidationOptions) => (target: object, propertyName: string) =>
    registerDecorator({
      name,
      target: target.constructor,
      propertyName,
      options: { message, ...options },
      validator: { validate: (v: unknown) => test(v) },
    });
}

export const IsMeshHost = simple('isMeshHost', isMeshHost, 'must be a host name such as reviews.foo.svc.cluster.local or *.example.com');
export const IsIPOrCIDR = simple('isIPOrCIDR', isIPOrCIDR, 'must be an IP address or CIDR range');
export const IsPortNumber = simple(
  'isPortNumber',
  (v) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65535,
  'must be a port number from 1 to 65535',
);

/** A map of strings to strings (labels, selectors, headers). */
export const IsStringMap = simple(
  'isStringMap',
  (v) => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string'),
  'must map strings to strings',
);

/** The OpenAPI schema of a map's values, for the CustomResourceDefinitions (see crd-schema.ts). */
export interface MapValueSchema {
  type: 'integer' | 'number' | 'string' | 'boolean';
  minimum?: number;
  maximum?: number;
}

/** A map whose values pass `test` (e.g. WorkloadEntry port names to numbers); `values` describes them for the CRDs. */
export function IsMapOf(test: (v: unknown) => boolean, what: string, values: MapValueSchema, options?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'isMapOf',
      target: target.constructor,
      propertyName,
      constraints: [values],
      options: { message: (a: ValidationArguments) => `${a.property} must map names to ${what}`, ...options },
      validator: {
        validate: (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every(test),
      },
    });
}

/** Indices of repeated values, for "duplicate" issues that name the second occurrence. */
export function duplicates<T>(values: readonly T[]): number[] {
  const seen = new Set<T>();
  const out: number[] = [];
  values.forEach((v, i) => (seen.has(v) ? out.push(i) : seen.add(v)));
  return out;
}
