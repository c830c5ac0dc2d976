export { DEFAULT_DNS_PROXY_ADDR, DnsProxyAddress, DnsProxyAddressError, parseDnsProxyAddress } from './address';
export { ANSWER_TTL_SECONDS, LookupTable } from './lookup-table';
export { NameTableClient, NameTableClientOptions, nameTableOf } from './name-table-client';
export { parseResolvConf, readResolvConf, ResolvConf, ResolvConfError, Upstream } from './resolv-conf';
export { DnsLog, DnsProxyOptions, DnsProxyServer, DnsProxyStats } from './server';
export { UpstreamForwarder } from './upstream';
