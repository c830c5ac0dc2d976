import * as fs from 'node:fs';
import { orchLibrary } from '../../src/modules/orch';
import { inject } from 'inversify';
import { command, givenFlags, MeshCommand, stringFlag } from '../../src/modules/cli';
import { configFileLimits, ConfigLimitSettingError, readConfigFile, readStreamAtMost } from '../../src/modules/config';
import { deepMerge, injectDocuments, InjectionConfigError, InjectionInputs, parseYamlDocument, SidecarInjector } from '../../src/modules/inject';
import { loadOrchConfig, OrchConfigError } from '../../src/modules/orch';
import { Settings, SettingsToken } from '../../src/modules/settings';
import { xdsConnectionFlags } from './flag-groups';

const DEFAULT_INJECTOR_CONFIG_MAP = 'mesh-sidecar-injector';
const DEFAULT_MESH_CONFIG_MAP = 'mesh';

@command({
  program: 'meshctl',
  path: 'orch-inject',
  summary: 'Inject the sidecar into workload definitions; unsupported resources pass through unchanged',
  flags: {
    ...xdsConnectionFlags,
    filename: stringFlag('input definitions; - reads stdin', { char: 'f' }),
    injectConfigFile: stringFlag('injection config file; excludes --injectConfigMapName'),
    injectConfigMapName: stringFlag('config map holding the injection config (key "config"); excludes --injectConfigFile', {
      default: DEFAULT_INJECTOR_CONFIG_MAP,
    }),
    meshConfigFile: stringFlag('mesh config file; wins over --meshConfigMapName'),
    meshConfigMapName: stringFlag('config map holding the mesh config (key "mesh")', { default: DEFAULT_MESH_CONFIG_MAP }),
    operatorFileName: stringFlag('operator resource file to take the injection settings from'),
    output: stringFlag('file to write the injected definitions to', { char: 'o' }),
    revision: stringFlag('control plane revision whose injection config to use', { char: 'r' }),
    valuesFile: stringFlag('injection values file'),
    webhookConfig: stringFlag('injection webhook configuration to read', { default: 'mesh-sidecar-injector' }),
  },
})
export class OrchInject extends MeshCommand {
  @inject(SidecarInjector) private readonly injector!: SidecarInjector;
  @inject(SettingsToken) private readonly settings!: Settings;

  async run(): Promise<void> {
    const { flags, metadata } = await this.parse(OrchInject);
    const given = givenFlags(flags, metadata);
    if (!flags.filename) this.fail('filename not specified (see --filename or -f)');
    if (flags.injectConfigFile && given.has('injectConfigMapName')) this.fail('--injectConfigFile and --injectConfigMapName are mutually exclusive');
    const maxBytes = this.maxBytes();
    const input = await this.readInput(flags.filename, maxBytes);
    const revision = flags.revision ?? '';
    const suffix = revision && revision !== 'default' ? `-${revision}` : '';
    const orch = new ConfigMapReader(flags.orchconfig, flags.context, flags.meshNamespace, flags.timeout.milliseconds);
    const injectorMap = flags.injectConfigMapName + (given.has('injectConfigMapName') ? '' : suffix);
    const meshMap = flags.meshConfigMapName + (given.has('meshConfigMapName') ? '' : suffix);

    const config = flags.injectConfigFile
      ? { text: await this.readFile(flags.injectConfigFile, maxBytes, '--injectConfigFile'), where: flags.injectConfigFile }
      : await orch.key(injectorMap, 'config');
    const values = flags.valuesFile
      ? { text: await this.readFile(flags.valuesFile, maxBytes, '--valuesFile'), where: flags.valuesFile }
      : await orch.key(injectorMap, 'values');
    const mesh = flags.meshConfigFile
      ? { text: await this.readFile(flags.meshConfigFile, maxBytes, '--meshConfigFile'), where: flags.meshConfigFile }
      : await orch.key(meshMap, 'mesh');
    const operator = flags.operatorFileName ? this.operatorSettings(await this.readFile(flags.operatorFileName, maxBytes, '--operatorFileName'), flags.operatorFileName) : {};

    let output: string;
    try {
      const inputs: InjectionInputs = this.injector.loadInputs(
        { config: config.text, values: values.text, mesh: mesh.text, where: { config: config.where, values: values.where, mesh: mesh.where } },
        { revision, ...operator },
      );
      output = injectDocuments(this.injector, inputs, input.text, input.where, (m) => process.stderr.write(m.endsWith('\n') ? m : m + '\n'));
    } catch (err) {
      if (err instanceof InjectionConfigError) this.fail(err.message);
      throw err;
    }
    if (flags.output) {
      try {
        fs.writeFileSync(flags.output, output);
      } catch (err) {
        this.fail(`cannot write ${flags.output}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
    } else process.stdout.write(output);
  }

  private maxBytes(): number {
    try {
      return configFileLimits(this.settings).maxBytes;
    } catch (err) {
      if (err instanceof ConfigLimitSettingError) this.fail(err.message);
      throw err;
    }
  }

  private async readInput(filename: string, maxBytes: number): Promise<{ text: string; where: string }> {
    if (filename === '-') {
      const bytes = await readStreamAtMost(process.stdin, maxBytes).catch((err: Error) => this.fail(`<stdin>: ${err.message}`));
      return { text: bytes.toString('utf8'), where: '<stdin>' };
    }
    return { text: await this.readFile(filename, maxBytes, '--filename'), where: filename };
  }

  private async readFile(file: string, maxBytes: number, flag: string): Promise<string> {
    const read = await readConfigFile(file, maxBytes);
    switch (read.kind) {
      case 'bytes':
        return read.bytes.toString('utf8');
      case 'gone':
        return this.fail(`${flag} ${file}: no such file or directory`);
      default:
        return this.fail(`${flag} ${file}: ${read.message}`);
    }
  }

  /** An operator resource's `spec.values` (over the values) and its extra injection templates. */
  private operatorSettings(text: string, where: string): { extraValues?: Record<string, unknown>; extraTemplates?: Record<string, string> } {
    let doc: unknown;
    try {
      doc = parseYamlDocument(text, where);
    } catch (err) {
      if (err instanceof InjectionConfigError) this.fail(err.message);
      throw err;
    }
    const values = (doc as { spec?: { values?: unknown } } | null)?.spec?.values;
    if (values === undefined || values === null) return {};
    if (typeof values !== 'object' || Array.isArray(values)) this.fail(`${where}: spec.values must be a mapping`);
    const templates = (values as { sidecarInjectorWebhook?: { templates?: unknown } }).sidecarInjectorWebhook?.templates;
    const extraTemplates: Record<string, string> = {};
    if (templates !== undefined && templates !== null) {
      if (typeof templates !== 'object' || Array.isArray(templates)) this.fail(`${where}: spec.values.sidecarInjectorWebhook.templates must be a mapping`);
      for (const [name, t] of Object.entries(templates as Record<string, unknown>)) {
        if (typeof t !== 'string') this.fail(`${where}: spec.values.sidecarInjectorWebhook.templates.${name} must be a string`);
        extraTemplates[name] = t as string;
      }
    }
    return { extraValues: deepMerge({}, values as Record<string, unknown>), extraTemplates };
  }
}

/** Reads keys of the mesh's config maps from the orchestrator, once per map. */
class ConfigMapReader {
  private readonly maps = new Map<string, Promise<Record<string, string>>>();

  constructor(
    private readonly orchconfig: string,
    private readonly context: string,
    private readonly namespace: string,
    private readonly timeoutMs: number,
  ) {}

  async key(name: string, key: string): Promise<{ text: string; where: string }> {
    const where = `config map ${this.namespace}/${name}`;
    const data = await this.read(name);
    const text = data[key];
    if (text === undefined) throw new OrchConfigError(`${where} has no key "${key}"`);
    return { text, where: `${where} key ${key}` };
  }

  private read(name: string): Promise<Record<string, string>> {
    let pending = this.maps.get(name);
    if (!pending) {
      pending = this.fetch(name);
      this.maps.set(name, pending);
    }
    return pending;
  }

  private async fetch(name: string): Promise<Record<string, string>> {
    const config = loadOrchConfig(this.orchconfig || undefined);
    if (this.context) {
      if (!config.getContextObject(this.context)) throw new OrchConfigError(`orchestrator config: no context named ${JSON.stringify(this.context)}`);
      config.setCurrentContext(this.context);
    }
    const api = config.makeApiClient(orchLibrary().CoreV1Api);
    const where = `config map ${this.namespace}/${name}`;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new OrchConfigError(`${where}: no answer from the orchestrator within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    try {
      const map = await Promise.race([api.readNamespacedConfigMap({ name, namespace: this.namespace }), timeout]);
      return map.data ?? {};
    } catch (err) {
      if (err instanceof OrchConfigError) throw err;
      const code = (err as { code?: number }).code;
      if (code === 404) throw new OrchConfigError(`${where} not found (give the file with --injectConfigFile, --valuesFile or --meshConfigFile instead)`);
      throw new OrchConfigError(`${where}: cannot read: ${(err as Error).message.split('\n')[0]}`);
    } finally {
      clearTimeout(timer);
    }
  }
}
