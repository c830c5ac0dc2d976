import { ConfigResource } from '../config/resource';
import { DEFAULT_MESH_CONFIG, MeshConfigValues } from '../mesh-config/values';
import { ConfigSnapshot } from '../config/store';
import { DestinationRuleSpec } from '../config/kinds/destination-rule';
import { SidecarSpec } from '../config/kinds/sidecar';
import { VirtualServiceSpec } from '../config/kinds/virtual-service';
import { labelsMatch, Service, ServiceEndpoint } from '../registry/model';
import { ServiceRegistrySnapshot } from '../registry/build';
import { CachedType, XdsCache } from './xds-cache';
import { Proxy } from './proxy';


export interface PushContextOptions {
  /** DNS suffix (`--domain`), for short host names in rules. */
  domain: string;
  /** Namespace whose policies apply mesh-wide. */
  rootNamespace: string;
  /** The mesh config the push is built with (the defaults when not given). */
  mesh?: MeshConfigValues;
}

/**
 * One immutable snapshot of everything generators may read for a push (DESIGN.md §2):
 * config, services and endpoints, with the lookups generators need precomputed.
 * Generators must not read anything else, so two proxies given the same push context and
 * the same scope get the same config.
 */
export class PushContext {
  readonly services: readonly Service[];
  private readonly vsByNamespace = new Map<string, ConfigResource<VirtualServiceSpec>[]>();
  private readonly drByHost = new Map<string, ConfigResource<DestinationRuleSpec>[]>();
  private readonly memo = new Map<string, unknown>();
  /** The xDS cache's epoch when this push was built (see `cached`). */
  private readonly cacheEpoch: number;
  /** Per-push memo of values that belong to one proxy (see memoizeFor). */
  private readonly proxyMemo = new WeakMap<object, Map<string, unknown>>();
  /** Values that read services and config but no endpoints (see memoizeTopology). */
  private readonly topologyMemo = new Map<string, unknown>();
  /** The previous push's topology values, when this push changed nothing but endpoints since it. */
  private inheritedTopology: ReadonlyMap<string, unknown> | undefined;
  /** The mesh config of this push: generators read it here, so one push never mixes two versions. */
  readonly mesh: MeshConfigValues;

  constructor(
    /** Monotonic push version, also the xDS `version_info` of what it produces. */
    readonly version: string,
    readonly config: ConfigSnapshot,
    readonly registry: ServiceRegistrySnapshot,
    readonly options: PushContextOptions,
    /** Encoded resources kept across pushes (PILOT_ENABLE_XDS_CACHE); absent when off. */
    private readonly cache?: XdsCache,
  ) {
    this.mesh = options.mesh ?? DEFAULT_MESH_CONFIG;
    this.cacheEpoch = cache?.epoch ?? 0;
    this.services = [...registry.services.values()];
    for (const vs of this.resources<VirtualServiceSpec>('VirtualService')) {
      const list = this.vsByNamespace.get(vs.metadata.namespace) ?? [];
      list.push(vs);
      this.vsByNamespace.set(vs.metadata.namespace, list);
    }
    for (const dr of this.resources<DestinationRuleSpec>('DestinationRule')) {
      const host = this.qualify(dr.spec.host, dr.metadata.namespace);
      const list = this.drByHost.get(host) ?? [];
      list.push(dr);
      this.drByHost.set(host, list);
    }
  }

  resources<S extends object>(kind: string): readonly ConfigResource<S>[] {
    return (this.config.get(kind) ?? []) as readonly ConfigResource<S>[];
  }

  service(hostname: string): Service | undefined {
    return this.registry.services.get(hostname);
  }

  endpoints(hostname: string, port: number): readonly ServiceEndpoint[] {
    return this.registry.endpoints.get(hostname)?.get(port) ?? [];
  }

  /** Services a proxy in `namespace` may see (exportTo: `*`, `.` = own namespace, or names). */
  visibleServices(namespace: string): readonly Service[] {
    return this.memoize(`visible-services/${namespace}`, () =>
      this.services.filter((s) => isExportedTo(s.exportTo, s.namespace, namespace)),
    );
  }

  /** A short host (`reviews`) in a rule of namespace `ns` means `reviews.<ns>.svc.<domain>`. */
  qualify(host: string, namespace: string): string {
    return qualifyHost(host, namespace, this.options.domain);
  }

  /**
   * VirtualServices visible from `namespace`, own namespace first, then others by
   * namespace/name (the incumbent's precedence for the same host).
   */
  virtualServices(namespace: string): readonly ConfigResource<VirtualServiceSpec>[] {
    return this.memoize(`virtual-services/${namespace}`, () => {
      const own = this.vsByNamespace.get(namespace) ?? [];
      const others = [...this.vsByNamespace.entries()]
        .filter(([ns]) => ns !== namespace)
        .sort(([a], [b]) => a.localeCompare(b))
        .flatMap(([, list]) => list.filter((vs) => isExportedTo(vs.spec.exportTo ?? ['*'], vs.metadata.namespace, namespace)));
      return [...sortByName(own), ...sortByName(others)];
    });
  }

  /** The first visible VirtualService whose hosts cover `hostname` (exact before wildcard). */
  virtualServiceFor(hostname: string, namespace: string): ConfigResource<VirtualServiceSpec> | undefined {
    const index = this.memoize(`mesh-virtual-services/${namespace}`, () => this.indexMeshVirtualServices(namespace));
    const exact = index.exact.get(hostname);
    if (exact) return exact;
    for (const { pattern, vs } of index.wildcards) if (hostMatches(pattern, hostname)) return vs;
    return undefined;
  }

  /**
   * The mesh VirtualServices `namespace` sees, by qualified host: asked for every service of
   * every route table and cluster, so each lookup is a map read, not a walk over all of them.
   */
  private indexMeshVirtualServices(namespace: string): MeshVirtualServiceIndex {
    const exact = new Map<string, ConfigResource<VirtualServiceSpec>>();
    const wildcards: { pattern: string; vs: ConfigResource<VirtualServiceSpec> }[] = [];
    for (const vs of this.virtualServices(namespace)) {
      if (!(vs.spec.gateways ?? ['mesh']).includes('mesh')) continue;
      for (const host of vs.spec.hosts ?? []) {
        const qualified = this.qualify(host, vs.metadata.namespace);
        // The first VirtualService (in precedence order) naming a host keeps it.
        if (!exact.has(qualified)) exact.set(qualified, vs);
        if (qualified === '*' || qualified.startsWith('*.')) wildcards.push({ pattern: qualified, vs });
      }
    }
    return { exact, wildcards };
  }

  /**
   * The DestinationRule in force for `hostname` from `namespace`: the proxy's own namespace
   * first, then the service's namespace, then the root namespace; a workloadSelector rule
   * applies only to proxies it selects.
   */
  destinationRuleFor(hostname: string, proxy: Pick<Proxy, 'namespace' | 'labels'>): ConfigResource<DestinationRuleSpec> | undefined {
    // Most hosts have none: asked per cluster and virtual host of every proxy, so nothing is allocated for them.
    const all = this.drByHost.get(hostname);
    if (all === undefined || all.length === 0) return undefined;
    const rules = all.filter(
      (dr) =>
        isExportedTo(dr.spec.exportTo ?? ['*'], dr.metadata.namespace, proxy.namespace) &&
        (!dr.spec.workloadSelector || (dr.metadata.namespace === proxy.namespace && labelsMatch(dr.spec.workloadSelector.matchLabels, proxy.labels))),
    );
    const serviceNs = this.service(hostname)?.namespace;
    const rank = (dr: ConfigResource) =>
      dr.metadata.namespace === proxy.namespace ? 0 : dr.metadata.namespace === serviceNs ? 1 : dr.metadata.namespace === this.options.rootNamespace ? 2 : 3;
    return [...rules].sort((a, b) => rank(a) - rank(b) || a.metadata.name.localeCompare(b.metadata.name))[0];
  }

  /** The Sidecar resource for a proxy: one selecting its labels, else its namespace's default, else the root namespace's. */
  sidecarFor(proxy: Pick<Proxy, 'namespace' | 'labels'>): ConfigResource<SidecarSpec> | undefined {
    const all = this.resources<SidecarSpec>('Sidecar');
    const own = all.filter((s) => s.metadata.namespace === proxy.namespace);
    return (
      own.find((s) => s.spec.workloadSelector && labelsMatch(s.spec.workloadSelector.labels, proxy.labels)) ??
      own.find((s) => !s.spec.workloadSelector) ??
      all.find((s) => s.metadata.namespace === this.options.rootNamespace && !s.spec.workloadSelector)
    );
  }

  /** Service endpoints whose address is one of the proxy's own IPs: the services it serves. */
  serviceInstancesOf(proxy: Pick<Proxy, 'ips'>): readonly ServiceEndpoint[] {
    return this.memoize(`instances/${proxy.ips.join(',')}`, () => {
      // Endpoints by address, indexed once per push rather than scanned per proxy.
      const byAddress = this.memoize('endpoints-by-address', () => {
        const index = new Map<string, ServiceEndpoint[]>();
        for (const byPort of this.registry.endpoints.values()) {
          for (const list of byPort.values()) {
            for (const ep of list) {
              const at = index.get(ep.address);
              if (at) at.push(ep);
              else index.set(ep.address, [ep]);
            }
          }
        }
        return index;
      });
      return [...new Set(proxy.ips)].flatMap((ip) => byAddress.get(ip) ?? []);
    });
  }

  /**
   * Per-push memo for values many proxies share (the clusters of a namespace, an encoded
   * route table...). Keys must include every input the value depends on besides this push.
   */
  memoize<T>(key: string, build: () => T): T {
    if (this.memo.has(key)) return this.memo.get(key) as T;
    const value = build();
    this.memo.set(key, value);
    return value;
  }

  /**
   * Says this push changed nothing but endpoints since `previous`: the same services, config
   * and mesh config. What `previous` memoized with memoizeTopology then holds here too, so an
   * endpoint push does not work out every namespace's scope again. Only the previous push's
   * own values are read, never its predecessors': pushes do not hold on to each other.
   */
  inheritTopology(previous: PushContext): void {
    const same = previous.mesh === this.mesh && previous.options.domain === this.options.domain && previous.options.rootNamespace === this.options.rootNamespace;
    this.inheritedTopology = same ? previous.topologyMemo : undefined;
  }

  /**
   * Like `memoize`, for values that read only services and config (never endpoints): kept
   * from the previous push when that one changed only endpoints (see inheritTopology).
   */
  memoizeTopology<T>(key: string, build: () => T): T {
    if (this.topologyMemo.has(key)) return this.topologyMemo.get(key) as T;
    const inherited = this.inheritedTopology;
    const value = inherited?.has(key) ? (inherited.get(key) as T) : build();
    this.topologyMemo.set(key, value);
    return value;
  }

  /**
   * Per-push memo of a value of one proxy (its scope, its inbound key), which a push asks for
   * once per type: held weakly by the proxy, so a proxy gone does not keep it, and with this
   * push, so a proxy no later push asks about does not keep this push alive.
   */
  memoizeFor<T>(proxy: object, key: string, build: () => T): T {
    let memo = this.proxyMemo.get(proxy);
    if (!memo) this.proxyMemo.set(proxy, (memo = new Map()));
    if (memo.has(key)) return memo.get(key) as T;
    const value = build();
    memo.set(key, value);
    return value;
  }

  /**
   * Like `memoize`, and also kept across pushes in the xDS cache until a change touches one of
   * `dependencies` (`host:<hostname>`, `kind:<Kind>`, `services` = any service definition).
   * The key must name every other input.
   *
   * The newest push reads and fills the cache directly, at one lookup: no change evicts
   * during a push, so the cache is the push's memo too (an entry dropped because the cache is
   * full is built again when next asked for, with this push's same inputs). A push built
   * before the cache's latest invalidation (one whose jobs are still running when the next
   * push is built) still reads it, but keeps what it builds in its own memo: stored, it could
   * put back what the newer push's change just evicted.
   */
  cached<T>(type: CachedType, key: string, dependencies: readonly string[] | (() => readonly string[]), build: () => T): T {
    return this.readOrBuild(type, key, dependencies, build, false);
  }

  /**
   * `cached` for a value a rebuild may start from: `build` is given `previous`, the value the
   * cache's latest invalidation evicted under the key (when this push is the newest), and must
   * check it still holds, since a dependency changed.
   */
  cachedFromPrevious<T>(type: CachedType, key: string, dependencies: readonly string[] | (() => readonly string[]), build: (previous: T | undefined) => T): T {
    return this.readOrBuild(type, key, dependencies, build, true);
  }

  private readOrBuild<T>(
    type: CachedType, key: string, dependencies: readonly string[] | (() => readonly string[]), build: (previous: T | undefined) => T, keepPrevious: boolean,
  ): T {
    const cache = this.cache?.enabled(type) ? this.cache : undefined;
    if (cache && cache.epoch === this.cacheEpoch) return cache.get(type, key, dependencies, build, keepPrevious);
    return this.memoize(`${type}/${key}`, () => cache?.peek<T>(type, key) ?? build(undefined));
  }
}

/** `reviews` in namespace `ns` → `reviews.ns.svc.<domain>`; names with a dot and `*` stay. */
export function qualifyHost(host: string, namespace: string, domain: string): string {
  if (host.includes('.') || host === '*') return host;
  return `${host}.${namespace}.svc.${domain}`;
}

export function isExportedTo(exportTo: readonly string[], ownerNamespace: string, viewerNamespace: string): boolean {
  if (exportTo.length === 0) return true;
  return exportTo.some((e) => e === '*' || (e === '.' && ownerNamespace === viewerNamespace) || e === viewerNamespace);
}

interface MeshVirtualServiceIndex {
  /** Qualified host → the first VirtualService naming it exactly. */
  exact: ReadonlyMap<string, ConfigResource<VirtualServiceSpec>>;
  /** Wildcard hosts in precedence order, for hosts no VirtualService names exactly. */
  wildcards: readonly { pattern: string; vs: ConfigResource<VirtualServiceSpec> }[];
}

/** `*.foo.com` covers `a.foo.com`; `*` covers everything. */
export function hostMatches(pattern: string, hostname: string): boolean {
  if (pattern === '*' || pattern === hostname) return true;
  return pattern.startsWith('*.') && hostname.endsWith(pattern.slice(1));
}

function sortByName<T extends ConfigResource>(list: readonly T[]): T[] {
  return [...list].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
}
