import { HttpFilter, HttpFilterFactory, NetworkFilter, NetworkFilterFactory, passRequest } from '../http/filter-api';

/**
 * A factory for a filter whose config the built-in proxy accepts but which has no effect on
 * requests here (say why where it is used): the listener is not NACKed, and the filter costs
 * nothing per request (the connection manager leaves `passRequest` filters out).
 */
export function acceptOnlyHttpFilter(typeUrl: string): HttpFilterFactory {
  return { typeUrl, create: (name): HttpFilter => ({ name, onRequest: passRequest }) };
}

/** The network counterpart: the filter lets every connection through. */
export function acceptOnlyNetworkFilter(typeUrl: string): NetworkFilterFactory {
  return { typeUrl, create: (name): NetworkFilter => ({ name, onConnection: () => 'continue' }) };
}
