import { ApiError, badRequest } from './errors';

/*
 * Protobuf request bodies: kubectl's typed commands (`create namespace|configmap|secret|
 * serviceaccount|token`) send `application/vnd.kubernetes.protobuf` (the `k8s\0` envelope
 * around runtime.Unknown). Those few kinds are decoded into their JSON form here, from their
 * field numbers; any other protobuf body is refused with 415. Answers are always JSON, which
 * clients accept.
 */

export const PROTOBUF = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

type Fields = Map<number, (bigint | Buffer)[]>;

function readVarint(buf: Buffer, at: { pos: number }): bigint {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    if (at.pos >= buf.length) throw badRequest('truncated protobuf body');
    const byte = buf[at.pos++];
    result |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return result;
    shift += 7n;
    if (shift > 63n) throw badRequest('malformed protobuf varint');
  }
}

function fields(buf: Buffer): Fields {
  const out: Fields = new Map();
  const at = { pos: 0 };
  while (at.pos < buf.length) {
    const tag = Number(readVarint(buf, at));
    const field = tag >> 3;
    const wire = tag & 7;
    let value: bigint | Buffer;
    if (wire === 0) value = readVarint(buf, at);
    else if (wire === 2) {
      const length = Number(readVarint(buf, at));
      if (at.pos + length > buf.length) throw badRequest('truncated protobuf body');
      value = buf.subarray(at.pos, at.pos + length);
      at.pos += length;
    } else if (wire === 1) {
      value = buf.subarray(at.pos, at.pos + 8);
      at.pos += 8;
    } else if (wire === 5) {
      value = buf.subarray(at.pos, at.pos + 4);
      at.pos += 4;
    } else throw badRequest(`unsupported protobuf wire type ${wire}`);
    const list = out.get(field) ?? [];
    list.push(value);
    out.set(field, list);
  }
  return out;
}

const str = (f: Fields, n: number) => (f.get(n)?.[0] as Buffer | undefined)?.toString('utf8');

/** The runtime.Unknown envelope: type and raw message. */
function unwrap(body: Buffer): { apiVersion?: string; kind?: string; raw: Buffer } {
  if (!body.subarray(0, 4).equals(MAGIC)) throw badRequest('protobuf body without the k8s envelope');
  const unknown = fields(body.subarray(4));
  const typeMeta = unknown.get(1)?.[0] as Buffer | undefined;
  const tm = typeMeta ? fields(typeMeta) : new Map();
  return { apiVersion: str(tm, 1), kind: str(tm, 2), raw: (unknown.get(2)?.[0] as Buffer | undefined) ?? Buffer.alloc(0) };
}

type Kind = 'string' | 'int' | 'bool' | 'strings' | 'map' | 'bytesmap' | Schema;
interface Schema {
  [field: number]: [name: string, kind: Kind];
}

const OBJECT_META: Schema = { 1: ['name', 'string'], 2: ['generateName', 'string'], 3: ['namespace', 'string'], 11: ['labels', 'map'], 12: ['annotations', 'map'], 14: ['finalizers', 'strings'] };

/** The kinds kubectl's typed commands send as protobuf (create namespace|configmap|secret|serviceaccount|token), field numbers from their generated.proto. */
const SCHEMAS: Record<string, Schema> = {
  'v1/Namespace': { 1: ['metadata', OBJECT_META], 2: ['spec', { 1: ['finalizers', 'strings'] }] },
  'v1/ConfigMap': { 1: ['metadata', OBJECT_META], 2: ['data', 'map'], 3: ['binaryData', 'bytesmap'], 4: ['immutable', 'bool'] },
  'v1/Secret': { 1: ['metadata', OBJECT_META], 2: ['data', 'bytesmap'], 3: ['type', 'string'], 4: ['stringData', 'map'], 5: ['immutable', 'bool'] },
  'v1/ServiceAccount': { 1: ['metadata', OBJECT_META], 4: ['automountServiceAccountToken', 'bool'] },
  'authentication.k8s.io/v1/TokenRequest': {
    1: ['metadata', OBJECT_META],
    2: ['spec', { 1: ['audiences', 'strings'], 4: ['expirationSeconds', 'int'], 3: ['boundObjectRef', { 1: ['kind', 'string'], 2: ['apiVersion', 'string'], 3: ['name', 'string'], 4: ['uid', 'string'] }] }],
  },
};

function decodeMessage(buf: Buffer, schema: Schema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, values] of fields(buf)) {
    const spec = schema[field];
    if (!spec) continue;
    const [name, kind] = spec;
    const last = values[values.length - 1];
    if (kind === 'string') out[name] = (last as Buffer).toString('utf8');
    else if (kind === 'int') out[name] = Number(last as bigint);
    else if (kind === 'bool') out[name] = (last as bigint) !== 0n;
    else if (kind === 'strings') out[name] = values.map((v) => (v as Buffer).toString('utf8'));
    else if (kind === 'map' || kind === 'bytesmap') {
      const map: Record<string, string> = {};
      for (const entry of values) {
        const e = fields(entry as Buffer);
        const key = str(e, 1) ?? '';
        const value = (e.get(2)?.[0] as Buffer | undefined) ?? Buffer.alloc(0);
        // []byte values travel as base64 in JSON.
        map[key] = kind === 'map' ? value.toString('utf8') : value.toString('base64');
      }
      out[name] = map;
    } else out[name] = decodeMessage(last as Buffer, kind);
  }
  return out;
}

/** A protobuf request body as its JSON form, for the kinds in SCHEMAS; others are 415. */
export function decodeProtobuf(body: Buffer): Record<string, unknown> {
  const { apiVersion, kind, raw } = unwrap(body);
  const schema = SCHEMAS[`${apiVersion}/${kind}`];
  if (!schema) {
    throw new ApiError(415, 'UnsupportedMediaType', `this test server reads protobuf bodies only for ${Object.keys(SCHEMAS).join(', ')}; send ${apiVersion}/${kind} as JSON`);
  }
  return { apiVersion, kind, ...decodeMessage(raw, schema) };
}
