import { runsOf, XdsResource } from '../model/generator';
import { TypeUrl, XdsTypeUrl } from '../envoy/type-urls';
import { DeltaResource } from '../envoy/wire';
import { markedVersion, WatchState } from './connection';
import { sharedNameList } from '../model/name-lists';
import { parseClusterName } from '../model/naming';
import { isHostScope, PushPlan } from './push-plan';
import { resourceVersion } from './versions';
import { SentResources } from './sent-resources';

/**
 * What a response carries, from what was generated against what the proxy was sent
 * (`WatchState.sent`): which names to generate, which removed clusters to keep for now, and
 * for each protocol the resources (and, in delta, the removals) that go out, recorded as sent
 * once the response is about to be written.
 *
 * Apart from the streams because this is the part that runs per proxy and per resource on
 * every push: each check reads the sent resources by position first, compares interned bodies
 * by identity, and builds a set of names only when something may have gone.
 */

/** What a push or request asks of one type: all its names, or only some. */
export type ResponseScope = PushPlan extends Map<XdsTypeUrl, infer S> ? S : never;

/** A response decided on: what it carries, and how the proxy's state follows once it is sent. */
export interface PlannedResponse {
  readonly resources: readonly XdsResource[];
  /** Delta: the names the proxy should drop. */
  readonly removed?: readonly string[];
  /** Shared runs `resources` is made of, in order (see concatRuns), when known. */
  readonly runs?: readonly (readonly XdsResource[])[];
  /** Records the response as what the proxy has; called right before it is encoded and written. */
  recordSent(): void;
}

/** LDS and CDS are state-of-the-world types: every response lists all resources. */
export function isStateOfTheWorldType(typeUrl: XdsTypeUrl): boolean {
  return typeUrl === TypeUrl.Listener || typeUrl === TypeUrl.Cluster;
}

/**
 * The hosts a response is limited to: a delta wildcard subscription pushed after only these
 * hosts' services changed. Undefined otherwise (then `namesToGenerate` says what to generate).
 */
export function hostsToGenerate(watch: WatchState, scope: ResponseScope, protocol: 'sotw' | 'delta'): ReadonlySet<string> | undefined {
  return isHostScope(scope) && protocol === 'delta' && watch.names === undefined ? scope.hosts : undefined;
}

/** The host a cluster name belongs to (`outbound|<port>|<subset>|<host>`). */
export function clusterHost(name: string): string | undefined {
  return parseClusterName(name)?.host;
}

/** The names held of `hosts`. */
function heldOf(watch: WatchState, hosts: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const host of hosts) out.push(...watch.sent.namesWith(clusterHost, host));
  return out;
}

/** The names to generate for `scope`; undefined asks the generator for all it has for the proxy. */
export function namesToGenerate(watch: WatchState, scope: ResponseScope, protocol: 'sotw' | 'delta', typeUrl: XdsTypeUrl): readonly string[] | undefined {
  if (isHostScope(scope)) scope = 'all';
  const subscribed = watch.names;
  if (subscribed) return scope === 'all' ? sharedNameList(subscribed) : subscribedOf(scope, subscribed);
  // A state-of-the-world LDS or CDS response lists everything, whatever changed.
  if (scope !== 'all' && protocol === 'sotw' && isStateOfTheWorldType(typeUrl)) return undefined;
  if (scope !== 'all') return [...scope];
  return undefined;
}

/**
 * The names of `scope` the proxy subscribed to, as a shared list (see name-lists): a push's
 * scope and a subscription are both shared by thousands of proxies, so the list, and what a
 * generator builds for it, is made once per pair.
 */
const intersections = new WeakMap<ReadonlySet<string>, WeakMap<ReadonlySet<string>, readonly string[]>>();

function subscribedOf(scope: ReadonlySet<string>, subscribed: ReadonlySet<string>): readonly string[] {
  let bySubscription = intersections.get(scope);
  if (!bySubscription) intersections.set(scope, (bySubscription = new WeakMap()));
  let list = bySubscription.get(subscribed);
  if (!list) {
    list = sharedNameList(new Set([...scope].filter((n) => subscribed.has(n))));
    bySubscription.set(subscribed, list);
  }
  return list;
}

/**
 * Make before break: what the proxy holds that was not generated this time is added to
 * `generated`, so clusters that go away stay until routes no longer point at them. Returns
 * whether anything was kept. With `hosts`, only those hosts' resources were generated.
 */
export function keepRemovedResources(watch: WatchState, generated: XdsResource[], hosts?: ReadonlySet<string>): boolean {
  if (hosts) {
    const names = new Set(generated.map((r) => r.name));
    let keptOfHosts = false;
    for (const name of heldOf(watch, hosts)) {
      const body = watch.sent.get(name);
      if (names.has(name) || body === undefined || markedVersion(body) !== undefined) continue;
      generated.push({ name, body });
      keptOfHosts = true;
    }
    return keptOfHosts;
  }
  // Counting first spares building a set of every name on the usual push, which removes nothing.
  if (countSent(watch.sent, generated) >= watch.sent.size) return false;
  let kept = false;
  const names = new Set(generated.map((r) => r.name));
  for (const [name, body] of watch.sent) {
    if (names.has(name) || markedVersion(body) !== undefined) continue;
    if (watch.names && !watch.names.has(name)) continue;
    generated.push({ name, body });
    kept = true;
  }
  return kept;
}

/** A state-of-the-world response: the resources it lists. */
export class SotwResponse implements PlannedResponse {
  constructor(
    private readonly watch: WatchState,
    readonly resources: readonly XdsResource[],
    /** LDS or CDS: the response lists everything the proxy has. */
    private readonly fullState: boolean,
  ) {}

  recordSent(): void {
    const { sent } = this.watch;
    if (this.fullState) sent.replace(this.resources);
    else {
      for (const r of this.resources) sent.set(r.name, r.body);
      sent.settle();
    }
  }
}

/**
 * The state-of-the-world response to `generated`, or undefined when a push finds nothing to
 * send. `requested` answers a request: it goes out even when nothing changed (the proxy waits
 * for it).
 */
export function planSotwResponse(watch: WatchState, typeUrl: XdsTypeUrl, generated: readonly XdsResource[], requested: boolean): SotwResponse | undefined {
  const fullState = isStateOfTheWorldType(typeUrl);
  const changed = generated.filter((r, i) => !sameBody(watch.sent.getAt(i, r.name), r.body));
  if (!requested && changed.length === 0 && !(fullState && hasRemovals(watch.sent, generated))) return undefined;
  // LDS and CDS responses must list every resource; RDS and EDS only what changed.
  return new SotwResponse(watch, fullState || requested ? generated : changed, fullState);
}

/** A delta response: the resources that changed, and the names the proxy should drop. */
export class DeltaResponse implements PlannedResponse {
  constructor(
    private readonly watch: WatchState,
    readonly resources: readonly DeltaResource[],
    readonly removed: string[],
    /** Shared runs `resources` is made of (see concatRuns), for the wire framing and the shared encodings. */
    readonly runs?: readonly (readonly DeltaResource[])[],
  ) {}

  recordSent(): void {
    const { sent } = this.watch;
    if (sent.size === 0) {
      // A stream's first response (the connect storm): held as one list, on the name index
      // other proxies with the same names share, without going through a per-name map first.
      sent.replace(this.resources, this.runs);
      return;
    }
    for (const r of this.resources) sent.set(r.name, r.body);
    for (const n of this.removed) sent.delete(n);
    sent.settle();
  }
}

/**
 * The delta response to `generated` (generated for `names`, for `hosts`, or for everything
 * when both are undefined), or undefined when a push finds nothing to send; `requested` as above.
 */
export function planDeltaResponse(
  watch: WatchState, generated: readonly XdsResource[], names: readonly string[] | undefined, requested: boolean, hosts?: ReadonlySet<string>,
): DeltaResponse | undefined {
  // A stream's first response, from the runs the generator shared: everything goes, as delta
  // resources made once per run.
  const first = watch.sent.size === 0 && !hosts;
  const shared = first || Object.isFrozen(generated) ? sharedDeltaRuns(generated) : undefined;
  const deltaRuns = first ? shared?.runs : undefined;
  const changed: DeltaResource[] = [];
  let known = 0;
  // Which of a short list changed, by position: the same positions of the same shared list are the same resources.
  let mask = 0;
  // Otherwise per proxy and resource, on every push: kept to a map read and (bodies are
  // interned, see body-interning) an identity check, so a push to thousands of proxies stays cheap.
  if (!deltaRuns) for (let i = 0; i < generated.length; i++) {
    const r = generated[i];
    const had = watch.sent.getAt(i, r.name);
    if (had !== undefined) {
      known += 1;
      if (had === r.body) continue;
      const marked = markedVersion(had);
      if (marked !== undefined ? marked === resourceVersion(r.body) : had.equals(r.body)) {
        watch.sent.set(r.name, r.body);
        continue;
      }
    }
    changed.push(deltaResourceOf(r));
    mask |= 1 << i;
  }
  // Everything a list many proxies share was changed (a push's new endpoints): the response is
  // that list's shared runs, whose framing and identity are worked out once for every proxy.
  const allOfShared = shared !== undefined && (deltaRuns !== undefined || (changed.length === generated.length && changed.length > 0));
  const resources: readonly DeltaResource[] = allOfShared
    ? shared.resources
    : changed.length > 0 && generated.length <= SUBSET_MAX_LENGTH && Object.isFrozen(generated)
      ? sharedSubset(generated, mask, changed)
      : changed;
  const runsOfResponse = allOfShared ? shared.runs : undefined;
  const removed: string[] = [];
  if (hosts) {
    // Only these hosts' resources were generated: what the proxy holds of them and did not get went.
    const present = new Set(generated.map((r) => r.name));
    for (const n of heldOf(watch, hosts)) if (!present.has(n)) removed.push(n);
  } else if (names) {
    // Generators answer only names asked for, each once: all of them answered, nothing went.
    if (generated.length < names.length) {
      const present = new Set(generated.map((r) => r.name));
      for (const n of names) if (!present.has(n) && (requested || watch.sent.has(n))) removed.push(n);
    }
  } else if (known < watch.sent.size) {
    const present = new Set(generated.map((r) => r.name));
    for (const name of watch.sent.keys()) if (!present.has(name)) removed.push(name);
  }
  if (!requested && resources.length === 0 && removed.length === 0) return undefined;
  return new DeltaResponse(watch, resources, removed, runsOfResponse);
}

/** Lists up to this long have their changed subsets shared (a position per bit of the mask). */
const SUBSET_MAX_LENGTH = 30;
/** Subsets kept per shared list: a push changes one or a few of them for everyone. */
const SUBSETS_PER_LIST = 16;
const subsetsOf = new WeakMap<readonly XdsResource[], Map<number, readonly DeltaResource[]>>();

/**
 * The changed part of a list many proxies share (some of a routed service's load assignments:
 * an endpoint moved in one subset), as one frozen array for every proxy with the same changes,
 * so the shared encodings identify it once (by identity) instead of once per proxy.
 */
function sharedSubset(generated: readonly XdsResource[], mask: number, changed: DeltaResource[]): readonly DeltaResource[] {
  let byMask = subsetsOf.get(generated);
  if (!byMask) subsetsOf.set(generated, (byMask = new Map()));
  const known = byMask.get(mask);
  if (known) return known;
  const made = Object.freeze(changed);
  if (byMask.size < SUBSETS_PER_LIST) byMask.set(mask, made);
  return made;
}

/**
 * The delta resource of a body under its name, once per body (bodies are interned and
 * shared): a push sends the same changed resources to thousands of proxies.
 */
const deltaResources = new WeakMap<Buffer, DeltaResource>();

function deltaResourceOf(r: XdsResource): DeltaResource {
  const known = deltaResources.get(r.body);
  if (known !== undefined && known.name === r.name) return known;
  const made: DeltaResource = Object.freeze({ name: r.name, body: r.body, version: resourceVersion(r.body) });
  if (known === undefined) deltaResources.set(r.body, made);
  return made;
}

interface SharedDeltaRuns {
  readonly runs: readonly (readonly DeltaResource[])[];
  /** The runs concatenated (frozen). */
  readonly resources: readonly DeltaResource[];
}

const sharedDeltaRunsOf = new WeakMap<readonly XdsResource[], SharedDeltaRuns | null>();

/**
 * The delta runs of a generated list made of shared runs (see concatRuns), or undefined. Kept
 * per list only when the list itself is shared (frozen, see sharedList): a proxy's own list
 * (its first CDS response, say) is asked about once.
 */
function sharedDeltaRuns(generated: readonly XdsResource[]): SharedDeltaRuns | undefined {
  const keep = Object.isFrozen(generated);
  const known = keep ? sharedDeltaRunsOf.get(generated) : undefined;
  if (known !== undefined) return known ?? undefined;
  const runs = runsOf(generated)?.map(deltaRun);
  const made = runs ? { runs, resources: Object.freeze(([] as DeltaResource[]).concat(...runs)) } : null;
  if (keep) sharedDeltaRunsOf.set(generated, made);
  return made ?? undefined;
}

const deltaRunsOf = new WeakMap<readonly XdsResource[], readonly DeltaResource[]>();

/** A run's resources with their versions, once per run. */
function deltaRun(run: readonly XdsResource[]): readonly DeltaResource[] {
  let out = deltaRunsOf.get(run);
  if (!out) {
    out = Object.freeze(run.map(deltaResourceOf));
    deltaRunsOf.set(run, out);
  }
  return out;
}

/** How many of `resources` the proxy was sent (under the same name). */
function countSent(sent: SentResources, resources: readonly XdsResource[]): number {
  let n = 0;
  for (let i = 0; i < resources.length; i++) if (sent.getAt(i, resources[i].name) !== undefined) n += 1;
  return n;
}

function sameBody(a: Buffer | undefined, b: Buffer): boolean {
  return a !== undefined && (a === b || a.equals(b));
}

function hasRemovals(sent: SentResources, resources: readonly XdsResource[]): boolean {
  if (sent.size !== resources.length) return true;
  return countSent(sent, resources) < resources.length;
}
