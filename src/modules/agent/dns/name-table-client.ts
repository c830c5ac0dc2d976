/**
 * The agent's NDS client: its own state-of-the-world ADS stream to the daemon, subscribed to
 * the name table only, feeding each table to the DNS proxy. Separate from the proxy's xDS
 * stream, since the name table is the agent's whichever proxy (Envoy or the built-in one)
 * runs. A table the callback throws on is NACKed and the previous one stays.
 */
import * as grpc from '@grpc/grpc-js';
import type { NameInfo, NameTable } from '../../envoy/name-table';
import { AdsNode, Decoded, XdsClient } from '../../proxy/xds/xds-client';
import { TypeUrl } from '../../envoy/type-urls';
import type { DnsLog } from './server';

export interface NameTableClientOptions {
  /** `host:port` of the daemon's xDS server (ProxyConfig discoveryAddress), or the agent's xDS proxy socket. */
  address: string;
  /** The agent's node: its metadata must carry DNS_CAPTURE or ENABLE_DNS_SERVER = true. */
  node: AdsNode;
  /** Asked for on each new channel; default plain text. */
  credentials?: () => grpc.ChannelCredentials;
  /** Called with every table the daemon sends; throwing rejects it (NACK). */
  onTable(table: NameTable): void;
  log?: DnsLog;
}

/** An ADS stream of its own, subscribed to the name table only (`*`: the one table the daemon has for this proxy). */
export class NameTableClient {
  private readonly ads: XdsClient;
  private tables = 0;

  constructor(options: NameTableClientOptions) {
    const log = options.log ?? (() => undefined);
    this.ads = new XdsClient(
      { address: options.address, node: options.node, credentials: options.credentials, wildcardTypes: [], userAgent: 'mesh-agent-dns', label: 'name table' },
      {
        log,
        apply: (typeUrl, resources) => {
          if (typeUrl !== TypeUrl.NameTable) return;
          const [resource] = resources.values();
          if (!resource) {
            log('warn', 'the daemon sent no name table: is DNS_CAPTURE or ENABLE_DNS_SERVER true in the node metadata (MESH_META_DNS_CAPTURE, MESH_META_ENABLE_DNS_SERVER)?');
          }
          options.onTable(resource ? nameTableOf(resource) : { table: {} });
          this.tables += 1;
        },
      },
    );
    this.ads.subscribe(TypeUrl.NameTable, ['*']);
  }

  start(): void {
    this.ads.start();
  }

  stop(): void {
    this.ads.stop();
  }

  /** Whether the stream to the daemon is up. */
  connected(): boolean {
    return this.ads.connected;
  }

  /** How many tables were applied so far. */
  received(): number {
    return this.tables;
  }
}

/** A decoded NameTable resource (proto3 JSON: empty fields absent) in full. */
export function nameTableOf(resource: Decoded): NameTable {
  if (resource['@type'] !== undefined && resource['@type'] !== TypeUrl.NameTable) {
    throw new Error(`expected a ${TypeUrl.NameTable}, got ${resource['@type']}`);
  }
  const table: Record<string, NameInfo> = {};
  for (const [host, raw] of Object.entries((resource.table ?? {}) as Record<string, Decoded>)) {
    table[host] = {
      ips: [...(raw.ips ?? [])].map(String),
      registry: String(raw.registry ?? ''),
      shortname: String(raw.shortname ?? ''),
      namespace: String(raw.namespace ?? ''),
      alt_hosts: [...(raw.alt_hosts ?? [])].map(String),
    };
  }
  return { table };
}
