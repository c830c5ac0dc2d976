/** DNS replies the proxy builds itself, and fitting a reply into what the client can take. */
import * as dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket } from 'dns-packet';

export const Rcode = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2 } as const;

/** Without EDNS a UDP reply may not exceed 512 bytes (RFC 1035); TCP takes up to 64 KiB. */
const CLASSIC_UDP_LIMIT = 512;
const TCP_LIMIT = 65535;
/** The UDP size we advertise in our own OPT records (the DNS flag day 2020 value). */
const OUR_UDP_SIZE = 1232;

const OPCODE_MASK = 0x7800;

/** The most bytes a reply to `query` may have: its EDNS UDP size (at least 512), or 64 KiB over TCP. */
export function replyLimit(query: DecodedPacket, protocol: 'udp' | 'tcp'): number {
  if (protocol === 'tcp') return TCP_LIMIT;
  const opt = optOf(query);
  return Math.min(TCP_LIMIT, Math.max(CLASSIC_UDP_LIMIT, opt?.udpPayloadSize ?? 0));
}

/**
 * A reply to `query` with `rcode` and `answers`: same ID, opcode, question and RD/CD flags;
 * RA (unknown names are resolved upstream); AA for names the mesh owns; an OPT record when
 * the query had one (RFC 6891).
 */
export function replyTo(query: DecodedPacket, rcode: number, answers: Answer[], authoritative: boolean): Buffer {
  const flags =
    ((query.flags ?? 0) & (OPCODE_MASK | dnsPacket.RECURSION_DESIRED | dnsPacket.CHECKING_DISABLED)) |
    dnsPacket.RECURSION_AVAILABLE |
    (authoritative ? dnsPacket.AUTHORITATIVE_ANSWER : 0) |
    rcode;
  const additionals: Answer[] = optOf(query) ? [{ type: 'OPT', name: '.', udpPayloadSize: OUR_UDP_SIZE, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }] : [];
  return dnsPacket.encode({ type: 'response', id: query.id, flags, questions: query.questions ?? [], answers, authorities: [], additionals });
}

/** FORMERR for bytes that are not a DNS query, when at least the header (and so the ID) is there. */
export function formatError(raw: Buffer): Buffer | undefined {
  if (raw.length < 12) return undefined;
  return dnsPacket.encode({ type: 'response', id: raw.readUInt16BE(0), flags: Rcode.FORMERR, questions: [], answers: [] });
}

/**
 * `reply` as is when it fits in `limit` bytes; else with the TC flag and as many whole answer
 * records as fit (authority and additional records dropped, the OPT record kept), so the
 * client retries over TCP for the rest.
 */
export function fitReply(reply: Buffer, limit: number): Buffer {
  if (reply.length <= limit) return reply;
  let packet: DecodedPacket;
  try {
    packet = dnsPacket.decode(reply);
  } catch {
    // Undecodable (an upstream's record we cannot re-encode): the header alone, truncated.
    const header = Buffer.from(reply.subarray(0, 12));
    header.writeUInt16BE(header.readUInt16BE(2) | dnsPacket.TRUNCATED_RESPONSE, 2);
    header.fill(0, 4);
    return header;
  }
  const answers = [...(packet.answers ?? [])];
  const opt = (packet.additionals ?? []).filter((a) => a.type === 'OPT');
  const build = (count: number) =>
    dnsPacket.encode({
      type: 'response',
      id: packet.id,
      flags: (packet.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE,
      questions: packet.questions ?? [],
      answers: answers.slice(0, count),
      authorities: [],
      additionals: opt,
    });
  // Binary search for the most answers that fit.
  let low = 0;
  let high = answers.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (build(mid).length <= limit) low = mid;
    else high = mid - 1;
  }
  return build(low);
}

function optOf(packet: DecodedPacket): { udpPayloadSize?: number } | undefined {
  return (packet.additionals ?? []).find((a) => a.type === 'OPT') as { udpPayloadSize?: number } | undefined;
}
