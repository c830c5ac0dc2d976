/**
 * The self-signed CA source: a root made on first start (or the persisted one, while still
 * valid), replaced by `rotate()` with a new root certificate of the same key. The replaced root stays in the
 * trust bundle until it expires.
 */
import { CaSource } from './ca-source';
import { Certificate } from './certificate';
import { CaConfigError, messageOf } from './errors';
import { CaLogger } from './logger';
import { createSelfSignedRoot, SelfSignedRoot } from './self-signed';
import { SelfSignedRootStore } from './self-signed-store';
import { SigningChain } from './signing-chain';
import { TrustBundle } from './trust-bundle';

export interface SelfSignedCaOptions {
  trustDomain: string;
  /** CA_SELF_SIGNED_CA_RSA_KEY_SIZE. */
  rsaKeySize: number;
  /** CA_SELF_SIGNED_CA_CERT_TTL. */
  ttlMs: number;
  /** Where the root is kept across restarts; none = a new root every start. */
  persistDir?: string;
  now: () => number;
  logger: CaLogger;
}

export class SelfSignedCa implements CaSource {
  readonly mode = 'self-signed';
  readonly trust: TrustBundle;
  private current: SigningChain;

  private constructor(
    private readonly options: SelfSignedCaOptions,
    private readonly store: SelfSignedRootStore | undefined,
    root: SelfSignedRoot,
    previousRoots: readonly Certificate[],
  ) {
    this.current = new SigningChain(root.key, [root.cert]);
    this.trust = new TrustBundle([root.cert, ...previousRoots], (err) => options.logger.error(`a root certificate listener failed: ${messageOf(err)}`));
  }

  /** @throws CaConfigError when a new root cannot be persisted. */
  static async create(options: SelfSignedCaOptions): Promise<SelfSignedCa> {
    const store = options.persistDir ? new SelfSignedRootStore(options.persistDir) : undefined;
    const now = options.now();
    const persisted = store ? await loadUsable(store, now, options.logger) : undefined;
    if (persisted) {
      options.logger.info(`using the persisted self-signed root of ${store!.dir}, valid until ${persisted.cert.notAfter.toISOString()}`);
      const previous = persisted.previousRoots.filter((root) => root.notAfter.getTime() > now);
      return new SelfSignedCa(options, store, persisted, previous);
    }
    const root = await createSelfSignedRoot({ trustDomain: options.trustDomain, rsaKeySize: options.rsaKeySize, ttlMs: options.ttlMs, now });
    if (store) {
      try {
        await store.save({ ...root, previousRoots: [] });
      } catch (err) {
        throw new CaConfigError(`cannot persist the self-signed root in ${store.dir}: ${messageOf(err)}`);
      }
    }
    options.logger.info(`created a self-signed root for trust domain ${options.trustDomain}, valid until ${root.cert.notAfter.toISOString()}`);
    return new SelfSignedCa(options, store, root, []);
  }

  signing(): SigningChain {
    return this.current;
  }

  /**
   * Replaces the root with a new certificate of the same key and subject (as the incumbent's
   * rotator does), keeps the old root trusted until it expires, persists, and tells the trust
   * bundle's listeners. Keeping the key makes the rotation seamless: a leaf of either root
   * verifies against either root certificate, so peers whose bundle has not caught up yet, or
   * whose leaf is not renewed yet, still trust each other.
   */
  async rotate(): Promise<void> {
    const now = this.options.now();
    const old = this.current.root;
    const root = await createSelfSignedRoot({ trustDomain: this.options.trustDomain, rsaKeySize: this.options.rsaKeySize, ttlMs: this.options.ttlMs, now, key: this.current.key });
    const previousRoots = this.trust.roots().filter((cert) => cert.notAfter.getTime() > now);
    if (this.store) {
      try {
        await this.store.save({ ...root, previousRoots });
      } catch (err) {
        // Keep rotating: an unpersisted root still beats an expiring one; a restart makes another.
        this.options.logger.error(`cannot persist the rotated root in ${this.store.dir}: ${messageOf(err)}`);
      }
    }
    this.current = new SigningChain(root.key, [root.cert]);
    this.trust.replace([root.cert, ...previousRoots]);
    this.options.logger.info(
      `rotated the self-signed root: the new one is valid until ${root.cert.notAfter.toISOString()}; the old one (until ${old.notAfter.toISOString()}) stays trusted until it expires`,
    );
  }

  /** Drops expired previous roots from the trust bundle. */
  pruneExpiredRoots(): void {
    const now = this.options.now();
    const root = this.current.root;
    const kept = this.trust.roots().filter((cert) => cert.equals(root) || cert.notAfter.getTime() > now);
    if (this.trust.replace(kept)) this.options.logger.info('expired previous root certificates left the trust bundle');
  }
}

async function loadUsable(store: SelfSignedRootStore, now: number, logger: CaLogger) {
  try {
    const persisted = await store.load();
    if (persisted && now >= persisted.cert.notAfter.getTime()) {
      logger.warn(`the persisted self-signed root in ${store.dir} expired at ${persisted.cert.notAfter.toISOString()}; creating a new one`);
      return undefined;
    }
    if (persisted && !persisted.cert.isCa) {
      logger.warn(`the persisted self-signed root in ${store.dir} is not a CA certificate; creating a new one`);
      return undefined;
    }
    return persisted;
  } catch (err) {
    logger.warn(`cannot reuse the persisted self-signed root: ${messageOf(err)}; creating a new one`);
    return undefined;
  }
}
