import * as fs from 'node:fs';
import * as path from 'node:path';
import { inject, injectable, named } from 'inversify';
import { addEnvoyProtos } from '../envoy/protos';
import { ContributionProvider } from './contribution-provider';
import { pluginMetadata } from './decorator';
import { PluginLoadError } from './loader';

/**
 * Contribution point: the proto files a plugin brings for the messages of its typed_config, so
 * the daemon can encode them and the agent decode them. Both programs load every enabled
 * plugin's protos at start (src/container.ts), before any xDS is encoded or decoded.
 */
export const ProtoContribution = Symbol.for('mesh.ProtoContribution');
export interface ProtoContribution {
  /** Include directory inside the plugin's own package (absolute); imports resolve against it, then the mesh's. */
  readonly protoRoot: string;
  /** Files relative to `protoRoot`, e.g. `example/filters/http/response_header/v1/config.proto`. */
  readonly protoFiles: readonly string[];
}

/** Puts the enabled plugins' protos into the shared protobuf root (src/modules/envoy/protos.ts). */
@injectable()
export class ProtoRegistry {
  private done = false;

  constructor(@inject(ContributionProvider) @named(ProtoContribution) private readonly contributions: ContributionProvider<ProtoContribution>) {}

  /**
   * Idempotent and cheap: the files are parsed when the root is first needed. A file that is
   * missing stops start-up here, naming the plugin, rather than at the first xDS message.
   */
  load(): void {
    if (this.done) return;
    this.done = true;
    for (const c of this.contributions.getContributions()) {
      const plugin = pluginMetadata(c?.constructor)?.name ?? 'unknown';
      if (!path.isAbsolute(c.protoRoot)) throw new PluginLoadError(`plugin "${plugin}": protoRoot must be an absolute directory, not "${c.protoRoot}"`);
      for (const file of c.protoFiles) {
        if (!fs.existsSync(path.join(c.protoRoot, file))) throw new PluginLoadError(`plugin "${plugin}": proto file ${file} not found under ${c.protoRoot}`);
      }
      addEnvoyProtos(c.protoRoot, c.protoFiles);
    }
  }
}
