import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { ScopedLogger } from '../../logging';
import type { CniMetrics } from '../metrics';
import { CNI_PLUGIN_TYPE, PLUGIN_ORCHCONFIG_FILE } from '../plugin-location';
import {
  CniConfigError,
  ExistingCniConfig,
  hasMeshPlugin,
  insertMeshPlugin,
  JsonObject,
  listsMeshPlugin,
  parseExistingCniConfig,
  removeMeshPlugin,
  standaloneCniConfig,
} from './cni-config';
import { alternateConfigName, cniConfigFiles, conflistNameFor } from './conf-dir';
import { ensureFile, readFileState, removeFile, writeFileAtomic } from './files';
import { formatCniJson } from './json-text';
import { LAUNCHER_MODE, launcherPath, launcherScript } from './launcher';
import type { PluginOrchConfig } from './plugin-orchconfig';

/** The file the installer owns in standalone mode when `--cni-conf-name` is not given (sorts after the node's own configs). */
export const STANDALONE_CONF_NAME = 'YY-mesh-cni.conflist';

const CONFIG_FILE_MODE = 0o644;
const DEFAULT_CHECK_INTERVAL_MS = 1000;

export interface CniInstallerOptions {
  mountedCniNetDir: string;
  mountedCniBinDir: string;
  cniAgentRunDir: string;
  /** '' = the highest-priority config (chained) or STANDALONE_CONF_NAME (standalone). */
  cniConfName: string;
  /** `--cni-conf-name` or CNI_CONF_NAME, for messages. */
  cniConfNameSource?: string;
  chainedCniPlugin: boolean;
  /** The rendered, checked plug-in config (see plugin-config.ts). */
  pluginConfig: JsonObject;
  /** Builds the plug-in's orchestrator config; throws OrchConfigError. Called at start (fatal) and on every check. */
  orchConfig: () => PluginOrchConfig;
  /** File mode of the plug-in's orchestrator config (decimal 384 = 0600). */
  orchConfigMode: number;
  /** The plug-in's entry point the launcher requires (CNI_PLUGIN_MAIN). */
  pluginMain: string;
  log: ScopedLogger;
  metrics: CniMetrics;
  /** Safety-net re-check interval beside the file watches; default 1000 ms. */
  checkIntervalMs?: number;
}

/** Why the installation is not complete right now; `info` when waiting for the node, `error` when something is wrong. */
class NotInstalled extends Error {
  constructor(
    message: string,
    readonly level: 'info' | 'error' = 'error',
  ) {
    super(message);
  }
}

/**
 * Installs the mesh CNI plug-in on the node and keeps it installed: the executable in the CNI
 * bin dir, the plug-in's orchestrator config in its run dir, and its entry in the node's network
 * config (chained into the highest-priority config, or its own file when standalone). Watches the
 * directories (and re-checks every `checkIntervalMs` as a safety net) and repairs whatever
 * disappears or is rewritten. stop() uninstalls: the mesh entry leaves the configs it was put in
 * (other plugins stay; a former `.conf` stays a `.conflist`), the standalone file, the
 * orchestrator config and the executable are removed (the incumbent's uninstall; it keeps them
 * only on an upgrade it detects through its DaemonSet, which is not done here).
 *
 * Events: `ready` (installation complete), `notReady` (reason), `installed` (config file written).
 * A malformed existing config is logged naming the file and left untouched; the installer stays
 * not ready and installs once the file is fixed.
 */
export class CniInstaller extends EventEmitter {
  readonly name = 'installer';
  private readonly log: ScopedLogger;
  private isReady = false;
  private running = false;
  private inFlight: Promise<void> | undefined;
  private rerun = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly watchers = new Map<string, fs.FSWatcher>();
  /** Chained mode: the configs holding our entry, cleaned on stop. */
  private readonly chainedFiles = new Set<string>();
  private standaloneFile: string | undefined;
  private currentConfigFile: string | undefined;
  private orchConfig: PluginOrchConfig | undefined;
  private lastProblems = '';
  private lastOrchConfigError = '';
  private lastPreemption = '';
  private warnedMissingMain = false;

  constructor(private readonly options: CniInstallerOptions) {
    super();
    this.log = options.log;
  }

  get ready(): boolean {
    return this.isReady;
  }

  /** The network config file holding the mesh plug-in, once installed. */
  get configFile(): string | undefined {
    return this.currentConfigFile;
  }

  get orchConfigFile(): string {
    return path.join(this.options.cniAgentRunDir, PLUGIN_ORCHCONFIG_FILE);
  }

  get executableFile(): string {
    return launcherPath(this.options.mountedCniBinDir);
  }

  /**
   * Builds the orchestrator config (its failure is fatal: rejects with the OrchConfigError), makes
   * the first installation attempt, then keeps watching. Resolves whether or not that attempt
   * completed (in chained mode the node's network config may not exist yet).
   */
  async start(): Promise<void> {
    if (this.running) throw new Error('the installer is already running');
    this.orchConfig = this.options.orchConfig();
    this.running = true;
    this.log.info(
      `installing the mesh CNI plug-in (${this.options.chainedCniPlugin ? 'chained' : 'standalone'}) into ${this.options.mountedCniNetDir}, ` +
        `executable in ${this.options.mountedCniBinDir}`,
    );
    await this.runPasses();
    if (!this.running) return;
    this.timer = setInterval(() => this.check(), this.options.checkIntervalMs ?? DEFAULT_CHECK_INTERVAL_MS);
  }

  /** Stops watching, waits for a check in progress, then uninstalls (see the class comment). */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearInterval(this.timer);
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
    await this.inFlight;
    await this.uninstall();
    this.setReady(false, 'stopped');
  }

  /** Re-checks the installation now (file events and the interval call this). */
  check(): void {
    if (!this.running) return;
    if (this.inFlight) {
      this.rerun = true;
      return;
    }
    void this.runPasses();
  }

  private runPasses(): Promise<void> {
    const run = (async () => {
      do {
        this.rerun = false;
        await this.pass();
      } while (this.rerun && this.running);
    })().finally(() => {
      this.inFlight = undefined;
    });
    this.inFlight = run;
    return run;
  }

  /** One check-and-repair of the three pieces; never throws. */
  private async pass(): Promise<void> {
    this.watchDirectories();
    const problems: NotInstalled[] = [];
    const attempt = async <T>(step: () => Promise<T>): Promise<T | undefined> => {
      try {
        return await step();
      } catch (err) {
        problems.push(err instanceof NotInstalled ? err : new NotInstalled((err as Error).message));
        return undefined;
      }
    };
    await attempt(() => this.installExecutable());
    await attempt(() => this.installOrchConfig());
    const wroteConfig = (await attempt(() => (this.options.chainedCniPlugin ? this.installChained() : this.installStandalone()))) ?? false;

    const summary = problems.map((p) => p.message).join('\n');
    if (summary !== this.lastProblems) {
      for (const p of problems) this.log[p.level](p.message);
      this.lastProblems = summary;
    }
    const ready = problems.length === 0;
    if (ready && (wroteConfig || !this.isReady)) {
      this.options.metrics.installsTotal.inc();
      this.log.info(`mesh CNI plug-in installed in ${this.currentConfigFile}`);
    }
    this.setReady(ready, summary);
  }

  private setReady(ready: boolean, reason: string): void {
    this.options.metrics.installReady.set(ready ? 1 : 0);
    if (ready === this.isReady) return;
    this.isReady = ready;
    if (ready) this.emit('ready');
    else this.emit('notReady', reason);
  }

  /** fs.watch on the three directories; one that is missing or whose watch broke is retried on the next pass. */
  private watchDirectories(): void {
    if (!this.running) return;
    const dirs = [this.options.mountedCniNetDir, this.options.mountedCniBinDir, this.options.cniAgentRunDir];
    for (const dir of dirs) {
      if (this.watchers.has(dir)) continue;
      try {
        const watcher = fs.watch(dir, { persistent: false }, () => this.check());
        watcher.on('error', () => {
          watcher.close();
          if (this.watchers.get(dir) === watcher) this.watchers.delete(dir);
        });
        this.watchers.set(dir, watcher);
      } catch {
        // Not there yet; the periodic check covers it until it is.
      }
    }
  }

  private async installExecutable(): Promise<void> {
    const file = this.executableFile;
    try {
      if (await ensureFile(file, launcherScript(this.options.pluginMain), LAUNCHER_MODE)) this.log.info(`installed the plug-in executable ${file}`);
    } catch (err) {
      throw new NotInstalled(`cannot install the plug-in executable ${file}: ${(err as Error).message}`);
    }
    if (!this.warnedMissingMain && !fs.existsSync(this.options.pluginMain)) {
      this.warnedMissingMain = true;
      this.log.warn(`the plug-in's entry point ${this.options.pluginMain} does not exist; ${file} will fail until it does`);
    }
  }

  private async installOrchConfig(): Promise<void> {
    // Rebuilt each pass so a rotated token reaches the plug-in; a failure keeps the last good one.
    try {
      this.orchConfig = this.options.orchConfig();
      this.lastOrchConfigError = '';
    } catch (err) {
      const message = `cannot refresh the plug-in's orchestrator config, keeping the last one: ${(err as Error).message}`;
      if (message !== this.lastOrchConfigError) this.log.warn(message);
      this.lastOrchConfigError = message;
    }
    const file = this.orchConfigFile;
    const mode = this.options.orchConfigMode;
    try {
      if (await ensureFile(file, this.orchConfig!.text, mode)) {
        this.log.info(`wrote the plug-in's orchestrator config ${file} (mode 0${mode.toString(8)}): ${this.orchConfig!.summary}`);
      }
    } catch (err) {
      throw new NotInstalled(`cannot write the plug-in's orchestrator config ${file}: ${(err as Error).message}`);
    }
  }

  /** Chained mode: puts the mesh entry into the node's config. True when it wrote. */
  private async installChained(): Promise<boolean> {
    const file = await this.chainedTarget();
    if (this.options.cniConfName) await this.warnIfPreempted(path.basename(file), conflistNameFor(path.basename(file)));
    const current = await readFileState(file);
    if (!current) throw new NotInstalled(`the CNI network config ${file} disappeared while being read`, 'info');
    let existing: ExistingCniConfig;
    try {
      existing = parseExistingCniConfig(current.text, file);
    } catch (err) {
      if (err instanceof CniConfigError) throw new NotInstalled(`${err.message}; left untouched, waiting for it to be fixed`);
      throw err;
    }
    if (onlyMesh(existing)) {
      throw new NotInstalled(`${file} holds only the mesh plug-in (a standalone install?); chaining needs the node's own network config`);
    }
    if (hasMeshPlugin(existing, this.options.pluginConfig)) {
      this.chainedFiles.add(file);
      this.currentConfigFile = file;
      return false;
    }
    // Runtimes read lists only from `.conflist` files (others as single plugins), so the result goes there.
    const target = path.join(path.dirname(file), conflistNameFor(path.basename(file)));
    try {
      await writeFileAtomic(target, formatCniJson(insertMeshPlugin(existing, this.options.pluginConfig)), current.mode);
      if (target !== file) await removeFile(file);
    } catch (err) {
      throw new NotInstalled(`cannot write the CNI network config ${target}: ${(err as Error).message}`);
    }
    if (target !== file) this.chainedFiles.delete(file);
    this.chainedFiles.add(target);
    this.currentConfigFile = target;
    this.log.info(target === file ? `added the mesh plug-in to ${file}` : `chained the mesh plug-in to ${file}, now ${target}`);
    this.emit('installed', target);
    return true;
  }

  /** The config to chain into: the named one (or its .conf/.conflist twin), else the runtime's first. */
  private async chainedTarget(): Promise<string> {
    const dir = this.options.mountedCniNetDir;
    const name = this.options.cniConfName;
    if (name) {
      for (const candidate of [name, alternateConfigName(name)]) {
        if (candidate && fs.existsSync(path.join(dir, candidate))) return path.join(dir, candidate);
      }
      const source = this.options.cniConfNameSource ? ` (${this.options.cniConfNameSource})` : '';
      throw new NotInstalled(`waiting for the CNI network config ${path.join(dir, name)}${source} to appear`, 'info');
    }
    let files: string[];
    try {
      files = await cniConfigFiles(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new NotInstalled(`waiting for the CNI network config directory ${dir} to exist`, 'info');
      throw new NotInstalled(`cannot list the CNI network config directory ${dir}: ${(err as Error).message}`);
    }
    if (files.length === 0) throw new NotInstalled(`waiting for a CNI network config (*.conf, *.conflist, *.json) in ${dir}`, 'info');
    return path.join(dir, files[0]);
  }

  /** Standalone mode: writes the installer's own config file. True when it wrote. */
  private async installStandalone(): Promise<boolean> {
    const dir = this.options.mountedCniNetDir;
    const name = this.options.cniConfName || STANDALONE_CONF_NAME;
    const file = path.join(dir, name);
    const desired = standaloneCniConfig(this.options.pluginConfig, name);
    this.standaloneFile = file;
    this.currentConfigFile = file;
    await this.warnIfPreempted(name);
    const current = await readFileState(file);
    if (current && current.mode === CONFIG_FILE_MODE && isDeepStrictEqual(parseOrUndefined(current.text), desired)) return false;
    try {
      await writeFileAtomic(file, formatCniJson(desired), CONFIG_FILE_MODE);
    } catch (err) {
      throw new NotInstalled(`cannot write the CNI network config ${file}: ${(err as Error).message}`);
    }
    this.log.info(`wrote the standalone mesh plug-in config ${file}`);
    this.emit('installed', file);
    return true;
  }

  /** The runtime uses the first config by name; say so (once per culprit) when ours is not it. */
  private async warnIfPreempted(...ours: string[]): Promise<void> {
    const first = (await cniConfigFiles(this.options.mountedCniNetDir).catch(() => [] as string[]))[0];
    const culprit = first !== undefined && !ours.includes(first) ? first : '';
    if (culprit && culprit !== this.lastPreemption) {
      this.log.warn(`${path.join(this.options.mountedCniNetDir, culprit)} sorts before ${ours[ours.length - 1]}: the container runtime uses it instead of the mesh plug-in's config`);
    }
    this.lastPreemption = culprit;
  }

  private async uninstall(): Promise<void> {
    for (const file of this.chainedFiles) {
      try {
        const current = await readFileState(file);
        if (!current) continue;
        const without = removeMeshPlugin(parseExistingCniConfig(current.text, file));
        if (!without) continue;
        await writeFileAtomic(file, formatCniJson(without), current.mode);
        this.log.info(`removed the mesh plug-in from ${file}`);
      } catch (err) {
        this.log.warn(`could not remove the mesh plug-in from ${file}: ${(err as Error).message}`);
      }
    }
    this.chainedFiles.clear();
    if (this.standaloneFile) {
      const file = this.standaloneFile;
      await this.removeIf(file, 'the standalone mesh plug-in config', (text) => {
        try {
          return listsMeshPlugin(parseExistingCniConfig(text, file));
        } catch {
          return false;
        }
      });
    }
    await this.removeIf(this.orchConfigFile, "the plug-in's orchestrator config", () => true);
    const launcher = launcherScript(this.options.pluginMain);
    await this.removeIf(this.executableFile, 'the plug-in executable', (text) => text === launcher);
  }

  /** Removes a file of ours, only when its content still says it is ours. */
  private async removeIf(file: string, what: string, ours: (text: string) => boolean): Promise<void> {
    try {
      const current = await readFileState(file);
      if (!current) return;
      if (!ours(current.text)) {
        this.log.warn(`left ${what} ${file} in place: it was rewritten by someone else`);
        return;
      }
      await removeFile(file);
      this.log.info(`removed ${what} ${file}`);
    } catch (err) {
      this.log.warn(`could not remove ${what} ${file}: ${(err as Error).message}`);
    }
  }
}

function onlyMesh(existing: ExistingCniConfig): boolean {
  if (existing.kind === 'plugin') return existing.config.type === CNI_PLUGIN_TYPE;
  return existing.plugins.every((p) => p.type === CNI_PLUGIN_TYPE);
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
