import { inject, injectable } from 'inversify';
import { ConfigIssue, configFileLimits, FileConfigSource, FileStatus, KindRegistry, KindRegistryToken, MemoryConfigStore } from '../config';
import { Logging, LoggingToken } from '../logging';
import { DaemonMetrics } from '../monitoring';
import { ServiceRegistries } from '../registry';
import { Settings, SettingsToken } from '../settings';
import { DaemonFlags, DaemonFlagsToken, DaemonStartError } from './daemon-flags';

/**
 * Where the daemon's config comes from: the `--configDir` directory (read, then watched) and,
 * one day, the orchestrator. The file source exists only when a directory is given, so its
 * setting (PILOT_CONFIG_FILE_MAX_BYTES) is checked only then.
 */
@injectable()
export class DaemonConfigSources {
  private fileSource: FileConfigSource | undefined;

  constructor(
    @inject(DaemonFlagsToken) private readonly flags: DaemonFlags,
    @inject(SettingsToken) private readonly settings: Settings,
    @inject(LoggingToken) private readonly logging: Logging,
    @inject(MemoryConfigStore) private readonly store: MemoryConfigStore,
    @inject(KindRegistryToken) private readonly kinds: KindRegistry,
    @inject(DaemonMetrics) private readonly metrics: DaemonMetrics,
    @inject(ServiceRegistries) private readonly registries: ServiceRegistries,
  ) {}

  /** Loads the directory into the store; resolves once it is read whole. */
  async start(): Promise<void> {
    if (this.registries.has('Orch')) this.warnNoOrchestrator();
    if (!this.flags.configDir) return;
    const log = this.logging.scope('file');
    this.fileSource = new FileConfigSource({
      dir: this.flags.configDir,
      kinds: this.kinds,
      limits: configFileLimits(this.settings),
      store: this.store,
      logger: log,
      onRejected: (issue: ConfigIssue) => this.metrics.totalRejectedConfigs.inc({ type: issue.kind ?? 'file' }),
    });
    try {
      await this.fileSource.start();
    } catch (err) {
      throw new DaemonStartError(`--configDir: ${(err as Error).message}`);
    }
    const resources = [...this.store.snapshot().values()].reduce((n, list) => n + list.length, 0);
    log.info(`loaded ${resources} resources from ${this.flags.configDir}; watching for changes`);
  }

  stop(): void {
    this.fileSource?.stop();
  }

  /** Each file under `--configDir` and what became of it (the /debug/config_files page). */
  status(): FileStatus[] {
    return this.fileSource?.status() ?? [];
  }

  private warnNoOrchestrator(): void {
    const log = this.logging.scope('orch');
    if (this.flags.orchconfig === '' && (this.settings.string('ORCH_SERVICE_HOST') ?? '') === '') {
      const note = this.flags.configDir ? '; serving config from --configDir only' : '';
      log.warn(`no orchestrator is configured (no --orchconfig, not running in a cluster); the Orch registry is empty${note}`);
    } else {
      log.warn('the orchestrator registry is not available in this build yet; the Orch registry is empty');
    }
  }
}
