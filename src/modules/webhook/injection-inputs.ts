/**
 * What the injection webhook injects with, kept current as the incumbent keeps it:
 * - files, when the injection directory holds `config` (and `values`): a daemon run without
 *   the orchestrator, or with the config mounted; the mesh config is then the daemon's
 *   `--meshConfig` file;
 * - else, on the orchestrator, the `mesh-sidecar-injector` ConfigMap (`-<revision>` for a
 *   revision) of the system namespace, keys `config` and `values`, and the `mesh` ConfigMap
 *   (key `mesh`; the `--meshConfig` file when there is none), watched.
 * A version that does not load is refused with its source and field named, and the last good
 * one stays in use.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { inject, injectable, optional } from 'inversify';
import { InjectionInputs, SidecarInjector } from '../inject';
import { Logging, LoggingToken, ScopedLogger } from '../logging';
import { MeshConfigFileToken } from '../mesh-config';
import { CONFIG_MAPS, Informer, OrchClient } from '../orch';
import { WebhookOptions, WebhookOptionsToken } from './options';

/** Where injection config files are looked for (the incumbent's `./var/lib/<mesh>/inject`). */
export const INJECTION_DIRECTORY = './var/lib/mesh/inject';
/** How often mounted files are checked for changes. */
const FILE_POLL_MS = 1000;
/** Larger texts are refused unread. */
const MAX_TEXT_BYTES = 4 * 1024 * 1024;

type Text = { text: string; where: string };

@injectable()
export class InjectionInputsSource {
  private inputs: InjectionInputs | undefined;
  /** Why there are no inputs yet (or why the latest version was refused). */
  private problem = 'the injection config has not been loaded yet';
  private lastKey = '';
  private configMaps: Informer<V1ConfigMap> | undefined;
  private watchedFiles: string[] = [];
  private readonly log: ScopedLogger;

  constructor(
    @inject(SidecarInjector) private readonly injector: SidecarInjector,
    @inject(OrchClient) private readonly orch: OrchClient,
    @inject(WebhookOptionsToken) private readonly options: WebhookOptions,
    @inject(LoggingToken) logging: Logging,
    @inject(MeshConfigFileToken) @optional() private readonly meshConfigFile?: string,
  ) {
    this.log = logging.scope('default');
  }

  /** The inputs to inject with; undefined until a version has loaded (`why()` says what is missing). */
  current(): InjectionInputs | undefined {
    return this.inputs;
  }

  why(): string {
    return this.problem;
  }

  /** Loads and watches the files, or the ConfigMaps; resolves once the first answer is in (config or not). */
  async start(): Promise<void> {
    const dir = INJECTION_DIRECTORY;
    if (fs.existsSync(path.join(dir, 'config'))) {
      this.log.info(`injection config from ${path.resolve(dir)} (config, values)`);
      this.watchedFiles = [path.join(dir, 'config'), path.join(dir, 'values'), ...(this.meshConfigFile ? [this.meshConfigFile] : [])];
      for (const file of this.watchedFiles) fs.watchFile(file, { interval: FILE_POLL_MS }, () => this.reloadFiles());
      this.reloadFiles();
      return;
    }
    if (!this.options.onOrchestrator) {
      this.problem = `no injection config: ${path.join(dir, 'config')} does not exist and no orchestrator is configured`;
      this.log.warn(this.problem);
      return;
    }
    const informer = this.orch.informer<V1ConfigMap>(CONFIG_MAPS, { namespace: this.options.systemNamespace });
    informer.on({ add: () => this.reloadConfigMaps(), update: (_o, _n, resync) => !resync && this.reloadConfigMaps(), delete: () => this.reloadConfigMaps() });
    this.configMaps = informer;
    informer.start();
    if (!(await informer.waitForSync(30_000))) this.log.warn(`the ConfigMaps of ${this.options.systemNamespace} are not listed yet: injection waits for ${this.injectorMapName()}`);
    this.reloadConfigMaps();
  }

  stop(): void {
    for (const file of this.watchedFiles) fs.unwatchFile(file);
    this.watchedFiles = [];
    this.configMaps?.stop();
    this.configMaps = undefined;
  }

  /** `mesh-sidecar-injector`, or `mesh-sidecar-injector-<revision>` for a revision (as meshctl orch-inject reads). */
  injectorMapName(): string {
    return `mesh-sidecar-injector${this.revisionSuffix()}`;
  }

  private revisionSuffix(): string {
    return this.options.revision && this.options.revision !== 'default' ? `-${this.options.revision}` : '';
  }

  private reloadFiles(): void {
    const dir = INJECTION_DIRECTORY;
    const config = readText(path.join(dir, 'config'));
    const values = readText(path.join(dir, 'values'));
    const mesh = this.meshConfigFile && fs.existsSync(this.meshConfigFile) ? readText(this.meshConfigFile) : undefined;
    if ('error' in config) return this.refuse(config.error);
    if ('error' in values) return this.refuse(values.error);
    if (mesh && 'error' in mesh) return this.refuse(mesh.error);
    this.load(config, values, mesh);
  }

  private reloadConfigMaps(): void {
    const ns = this.options.systemNamespace;
    const injectorName = this.injectorMapName();
    const injectorMap = this.configMaps?.get(injectorName, ns);
    if (!injectorMap) {
      if (this.inputs) this.log.warn(`ConfigMap ${ns}/${injectorName} is gone: injecting with the last config it had`);
      else this.problem = `ConfigMap ${ns}/${injectorName} does not exist`;
      return;
    }
    const key = (map: V1ConfigMap, name: string, k: string): Text | { error: string } => {
      const text = map.data?.[k];
      if (text === undefined) return { error: `ConfigMap ${ns}/${name} has no key "${k}"` };
      if (Buffer.byteLength(text) > MAX_TEXT_BYTES) return { error: `ConfigMap ${ns}/${name} key ${k} is over ${MAX_TEXT_BYTES} bytes` };
      return { text, where: `ConfigMap ${ns}/${name} key ${k}` };
    };
    const config = key(injectorMap, injectorName, 'config');
    const values = key(injectorMap, injectorName, 'values');
    if ('error' in config) return this.refuse(config.error);
    if ('error' in values) return this.refuse(values.error);
    const meshName = `mesh${this.revisionSuffix()}`;
    const meshMap = this.configMaps?.get(meshName, ns);
    let mesh: Text | { error: string } | undefined;
    if (meshMap) mesh = key(meshMap, meshName, 'mesh');
    else if (this.meshConfigFile && fs.existsSync(this.meshConfigFile)) mesh = readText(this.meshConfigFile);
    if (mesh && 'error' in mesh) return this.refuse(mesh.error);
    this.load(config, values, mesh);
  }

  private load(config: Text, values: Text, mesh: Text | undefined): void {
    const key = JSON.stringify([config.text, values.text, mesh?.text ?? null]);
    if (key === this.lastKey) return;
    try {
      this.inputs = this.injector.loadInputs(
        { config: config.text, values: values.text, ...(mesh ? { mesh: mesh.text } : {}), where: { config: config.where, values: values.where, mesh: mesh?.where ?? 'the default mesh config' } },
        { revision: this.options.revision === 'default' ? '' : this.options.revision },
      );
    } catch (err) {
      return this.refuse((err as Error).message);
    }
    this.lastKey = key;
    this.problem = '';
    this.log.info(`injection config loaded from ${config.where}, ${values.where}${mesh ? `, mesh config from ${mesh.where}` : ''}`);
  }

  private refuse(message: string): void {
    if (this.inputs) {
      this.log.error(`injection config refused, injecting with the last good one: ${message}`);
    } else {
      this.problem = message;
      this.log.error(`injection config refused: ${message}`);
    }
  }
}

function readText(file: string): Text | { error: string } {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) return { error: `${file} is not a regular file` };
    if (stat.size > MAX_TEXT_BYTES) return { error: `${file} is over ${MAX_TEXT_BYTES} bytes` };
    return { text: fs.readFileSync(file, 'utf8'), where: file };
  } catch (err) {
    return { error: `${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}` };
  }
}
