import { X509Certificate } from 'node:crypto';
import { alignColumns, TABLE_GAP } from './columns';
import { ConfigDump, list, obj, requireSection, str } from './dump';
import { toProtoJson } from './proto-json';

/** Warming secrets first, then active ones, as the reference lists them. */
function secrets(dump: ConfigDump): { status: string; entry: Record<string, unknown> }[] {
  const section = requireSection(dump, 'SecretsConfigDump');
  return [
    ...list(section.static_secrets).map((e) => ({ status: 'ACTIVE', entry: obj(e) })),
    ...list(section.dynamic_warming_secrets).map((e) => ({ status: 'WARMING', entry: obj(e) })),
    ...list(section.dynamic_active_secrets).map((e) => ({ status: 'ACTIVE', entry: obj(e) })),
  ];
}

export function secretsData(dump: ConfigDump): unknown {
  const { '@type': _t, ...rest } = requireSection(dump, 'SecretsConfigDump');
  return toProtoJson(rest);
}

const isoSeconds = (date: string): string => new Date(date).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Type, validity, serial and dates of a secret's first certificate; blanks when it has none. */
function describeCert(secret: Record<string, unknown>, now: Date): string[] {
  const chain = obj(secret.tls_certificate).certificate_chain;
  const ca = obj(secret.validation_context).trusted_ca;
  const source = obj(chain ?? ca);
  const type = chain ? 'Cert Chain' : ca ? 'CA' : '';
  const bytes = source.inline_bytes !== undefined ? Buffer.from(str(source.inline_bytes), 'base64') : source.inline_string !== undefined ? Buffer.from(str(source.inline_string)) : undefined;
  if (!bytes) return [type, 'false', '', '', ''];
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(bytes);
  } catch {
    return [type, 'false', '', '', ''];
  }
  const notBefore = new Date(cert.validFrom);
  const notAfter = new Date(cert.validTo);
  const valid = now >= notBefore && now <= notAfter;
  return [type, String(valid), cert.serialNumber.toLowerCase(), isoSeconds(cert.validTo), isoSeconds(cert.validFrom)];
}

/** RESOURCE NAME, TYPE, STATUS, VALID CERT, SERIAL NUMBER, NOT AFTER, NOT BEFORE. */
export function secretsTable(dump: ConfigDump, prefix = '', now = new Date()): string {
  const rows = secrets(dump).map(({ status, entry }) => {
    const secret = obj(entry.secret);
    const [type, valid, serial, notAfter, notBefore] = describeCert(secret, now);
    return [prefix + str(entry.name ?? secret.name), type, status, valid, serial, notAfter, notBefore];
  });
  return alignColumns([['RESOURCE NAME', 'TYPE', 'STATUS', 'VALID CERT', 'SERIAL NUMBER', 'NOT AFTER', 'NOT BEFORE'], ...rows], TABLE_GAP);
}
