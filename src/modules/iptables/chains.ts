/** The mesh's chain names (DESIGN §1) and the fixed addresses and ports the rules use. */
export const Chain = {
  Inbound: 'MESH_INBOUND',
  Redirect: 'MESH_REDIRECT',
  InRedirect: 'MESH_IN_REDIRECT',
  Output: 'MESH_OUTPUT',
  OutputDns: 'MESH_OUTPUT_DNS',
  Divert: 'MESH_DIVERT',
  Tproxy: 'MESH_TPROXY',
  Drop: 'MESH_DROP',
} as const;

/** Every mesh chain starts with this; cleanup removes all chains that do. */
export const MESH_CHAIN_PREFIX = 'MESH_';

/** Source address the proxy binds for inbound passthrough connections to the app. */
export const PASSTHROUGH_SOURCE = { v4: '127.0.0.6/32', v6: '::6/128' };
export const LOOPBACK_V6 = '::1/128';
export const AGENT_DNS_PORT = '15053';
/** Mark the proxy's own outbound-to-inbound loopback traffic gets in TPROXY mode. */
export const OUTBOUND_MARK = '1338';
