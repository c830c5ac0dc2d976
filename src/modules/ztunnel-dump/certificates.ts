import { alignColumns } from '../proxy-dump';
import { Cert, ZtunnelDump } from './dump';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

function parseTime(text: string): number | undefined {
  if (!RFC3339.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Whether `now` lies strictly between the certificate's dates; false when a date is missing or unreadable. */
function isValid(cert: Cert, now: number): boolean {
  const from = parseTime(cert.validFrom);
  const until = parseTime(cert.expirationTime);
  return from !== undefined && until !== undefined && now > from && now < until;
}

/**
 * ztunnel writes serial numbers in decimal; the table shows them in hex as the reference does
 * (its big-integer formatting prints `<nil>` for a serial that is not a decimal number).
 */
function hexSerial(serial: string): string {
  return /^[+-]?\d+$/.test(serial) ? BigInt(serial).toString(16) : '<nil>';
}

/** The reference lays this table out with 5 blanks between columns, the others with 1. */
const CERTIFICATES_GAP = 5;

const orNA = (value: string): string => value || 'NA';

/**
 * CERTIFICATE NAME, TYPE, STATUS, VALID CERT, SERIAL NUMBER, NOT AFTER, NOT BEFORE: one row per
 * certificate of each identity, in dump order: the chain's first is the Leaf, the others
 * Intermediate, then each of `rootCerts` a Root. Older dumps had no `rootCerts` and ended the
 * chain with the root. An identity without certificates (Initializing, Unavailable) gets one
 * row of NA; an `Unavailable: <reason>` state shows as `Unavailable`.
 */
export function certificatesTable(dump: ZtunnelDump, now = Date.now()): string {
  const rows: string[][] = [];
  for (const c of dump.certificates) {
    const state = c.state.includes('Unavailable') ? 'Unavailable' : c.state;
    if (c.certChain.length === 0) {
      rows.push([c.identity, 'NA', state, 'false', 'NA', 'NA', 'NA']);
      continue;
    }
    const legacy = c.rootCerts.length === 0;
    const row = (cert: Cert, type: string) => [c.identity, type, state, String(isValid(cert, now)), hexSerial(cert.serialNumber), orNA(cert.expirationTime), orNA(cert.validFrom)];
    c.certChain.forEach((cert, i) => rows.push(row(cert, i === 0 ? 'Leaf' : legacy && i === c.certChain.length - 1 ? 'Root' : 'Intermediate')));
    c.rootCerts.forEach((cert) => rows.push(row(cert, 'Root')));
  }
  return alignColumns([['CERTIFICATE NAME', 'TYPE', 'STATUS', 'VALID CERT', 'SERIAL NUMBER', 'NOT AFTER', 'NOT BEFORE'], ...rows], CERTIFICATES_GAP);
}

export function certificatesData(dump: ZtunnelDump): unknown[] {
  return dump.certificates.map((c) => c.raw);
}
