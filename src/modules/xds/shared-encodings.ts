import { createHash } from 'node:crypto';
import { XdsResource } from '../model/generator';
import { OutgoingMessage } from '../envoy/wire';

/**
 * One encoding per distinct response, written to every stream that gets it.
 *
 * Proxies of one scope get the same responses: on a connect storm, the same clusters and
 * listeners; on a push, the same few changed resources. Encoded per stream, each copy costs
 * the CPU to frame and concatenate it and the memory to hold it while it is written. Here a
 * response is identified by exactly what its bytes are made of: the protocol, type, push
 * version, each resource's name and (interned) body by identity, and the names removed. Two
 * streams share an encoding only when those are the same, so a proxy can never be handed
 * another scope's config: a different resource is a different body, hence a different key.
 *
 * A shared encoding carries one nonce for all its streams. Nonces stay unique per stream: a
 * stream that was already given an encoding gets its own one if the same response comes again.
 */

/** The parts of a response that make its bytes (the nonce aside). */
export interface ResponseContent {
  protocol: 'sotw' | 'delta';
  typeUrl: string;
  version: string;
  resources: readonly XdsResource[];
  /** Delta: names the proxy should drop. */
  removed?: readonly string[];
  /** Shared runs `resources` is made of (see concatRuns): the key is then made from the runs. */
  runs?: readonly (readonly XdsResource[])[];
}

export interface SharedEncoding {
  body: OutgoingMessage;
  nonce: string;
  /** Whether the encoding was taken from an earlier stream's response. */
  reused: boolean;
}

/** Bodies by identity: a number per (body, name), given out once. */
const bodyIds = new WeakMap<Buffer, { name: string; id: string }>();
let nextBodyId = 0;

function bodyId(r: XdsResource): string {
  const known = bodyIds.get(r.body);
  if (known) return known.name === r.name ? known.id : `${known.id}=${r.name}`;
  const id = (nextBodyId++).toString(36);
  bodyIds.set(r.body, { name: r.name, id });
  return id;
}

/** Above this many characters the resource part of a key is kept as a digest (long Map keys hash poorly). */
const DIGEST_ABOVE = 1024;

/**
 * A run's identity by content, worked out once per run (runs are frozen, see concatRuns): two
 * runs of the same names and bodies, such as the inbound clusters of two proxies with the same
 * ports, read alike and so still share an encoding.
 */
const runIds = new WeakMap<readonly XdsResource[], string>();

function runId(run: readonly XdsResource[]): string {
  let id = runIds.get(run);
  if (id === undefined) runIds.set(run, (id = resourcesKey(run)));
  return id;
}

/** The names and bodies of `resources`, as a string (a digest when long). */
function resourcesKey(resources: readonly XdsResource[], removed: readonly string[] = []): string {
  const ids = new Array<string>(resources.length);
  for (let i = 0; i < resources.length; i++) ids[i] = bodyId(resources[i]);
  // JSON: names (removals come from what proxies subscribed) cannot make two lists read alike.
  const parts = JSON.stringify([ids, removed]);
  return parts.length > DIGEST_ABOVE ? `#${createHash('sha256').update(parts).digest('base64')}` : parts;
}

type Runs = readonly (readonly XdsResource[])[];

/**
 * What is worked out once per list shared by many streams (a push's answer is one list, or one
 * runs list, for thousands of them): its part of a key with nothing removed, and the last
 * whole key made from it. Handing every stream that same string, instead of a new
 * concatenation, spares the string build and, since a string keeps its hash, the Map's rehash.
 */
interface SharedKeys {
  part: string;
  last?: { protocol: string; typeUrl: string; version: string; count: number; key: string };
}

const runsKeys = new WeakMap<Runs, SharedKeys>();

function runsKeysOf(runs: Runs): SharedKeys {
  let keys = runsKeys.get(runs);
  if (!keys) runsKeys.set(runs, (keys = { part: JSON.stringify([runs.map(runId), []]) }));
  return keys;
}

/** The same for a frozen list of resources (not runs), such as the changed part of a shared list. */
const listKeys = new WeakMap<readonly XdsResource[], SharedKeys>();

function listKeysOf(resources: readonly XdsResource[]): SharedKeys {
  let keys = listKeys.get(resources);
  if (!keys) listKeys.set(resources, (keys = { part: runId(resources) }));
  return keys;
}

/** The identity of a response's bytes (the nonce aside). */
export function contentKey(content: ResponseContent): string {
  const { runs, removed = [] } = content;
  if (!runs) {
    // A frozen list is shared: its key is made once, and reads as the one made per call would.
    if (removed.length === 0 && Object.isFrozen(content.resources)) return sharedKey(content, listKeysOf(content.resources), '');
    return `${headOf(content)}${resourcesKey(content.resources, removed)}`;
  }
  // 'runs:' keeps the two forms from ever reading alike.
  if (removed.length > 0) return `${headOf(content)}runs:${JSON.stringify([runs.map(runId), removed])}`;
  return sharedKey(content, runsKeysOf(runs), 'runs:');
}

/** `content`'s key from the part its shared list has, reusing the last one made when the head is the same. */
function sharedKey(content: ResponseContent, keys: SharedKeys, form: string): string {
  const { protocol, typeUrl, version } = content;
  const count = content.resources.length;
  const last = keys.last;
  if (last && last.protocol === protocol && last.typeUrl === typeUrl && last.version === version && last.count === count) return last.key;
  const key = `${headOf(content)}${form}${keys.part}`;
  keys.last = { protocol, typeUrl, version, count, key };
  return key;
}

function headOf(content: ResponseContent): string {
  return `${content.protocol} ${content.typeUrl} ${content.version} ${content.resources.length}\n`;
}

/**
 * Encodings kept at once, by bytes, least recently used going first: a storm of large responses
 * cannot grow memory without bound, and a past push's responses (their version is in the key,
 * so they never match again) make way for the current one's.
 */
const DEFAULT_MAX_BYTES = 32 * 1024 * 1024;

/**
 * Keys of large responses seen once, remembered without their bytes. A large encoding is kept
 * from the second time its response is wanted: a connect storm's per-proxy responses (every
 * proxy's own inbound clusters make its CDS unique, megabytes each) are never kept, so they
 * cannot push out the responses whole scopes share. Small ones are kept at once; they cannot
 * crowd out much.
 */
const SEEN_ONCE_KEYS = 8192;
const KEPT_AT_ONCE_BYTES = 64 * 1024;

export class SharedEncodings {
  /** Key → encoding, least recently used first. */
  private readonly entries = new Map<string, { body: OutgoingMessage; nonce: string; receivers: WeakSet<object> }>();
  /** Keys wanted once and not kept (see SEEN_ONCE_KEYS), oldest first. */
  private readonly seenOnce = new Set<string>();
  private bytes = 0;
  private nonces = 0;
  /** The key used last, already at the recent end of `entries`: a fan-out asks for it thousands of times in a row. */
  private newestKey: string | undefined;

  constructor(
    /** Tells the nonce apart from those of other servers' encodings and of per-stream nonces. */
    private readonly noncePrefix: string,
    private readonly maxBytes = DEFAULT_MAX_BYTES,
  ) {}

  /**
   * The encoding of `content` for `receiver` (one stream's state of one type): the one already
   * made for another stream, or a new one made by `encode` with a fresh nonce. A receiver is
   * given each shared encoding at most once, so it never sees a nonce twice.
   */
  encodingFor(content: ResponseContent, receiver: object, encode: (nonce: string) => OutgoingMessage): SharedEncoding {
    const key = contentKey(content);
    const known = this.entries.get(key);
    if (known && !known.receivers.has(receiver)) {
      known.receivers.add(receiver);
      if (key !== this.newestKey) {
        this.entries.delete(key);
        this.entries.set(key, known);
        this.newestKey = key;
      }
      return { body: known.body, nonce: known.nonce, reused: true };
    }
    const nonce = this.nextNonce();
    const body = encode(nonce);
    if (!known && body.length <= this.maxBytes && (body.length <= KEPT_AT_ONCE_BYTES || this.wantedBefore(key))) {
      this.entries.set(key, { body, nonce, receivers: new WeakSet([receiver]) });
      this.newestKey = key;
      this.bytes += body.length;
      this.trim();
    }
    return { body, nonce, reused: false };
  }

  /** Whether `key` was wanted before; remembers it otherwise. */
  private wantedBefore(key: string): boolean {
    if (this.seenOnce.delete(key)) return true;
    this.seenOnce.add(key);
    if (this.seenOnce.size > SEEN_ONCE_KEYS) this.seenOnce.delete(this.seenOnce.values().next().value!);
    return false;
  }

  private nextNonce(): string {
    this.nonces += 1;
    return `${this.noncePrefix}${this.nonces.toString(36)}`;
  }

  /** Encodings held now (for tests and debugging). */
  get size(): number {
    return this.entries.size;
  }

  private forget(key: string, body: OutgoingMessage): void {
    this.entries.delete(key);
    this.bytes -= body.length;
    if (key === this.newestKey) this.newestKey = undefined;
  }

  private trim(): void {
    for (const [key, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) return;
      this.forget(key, entry.body);
    }
  }
}
