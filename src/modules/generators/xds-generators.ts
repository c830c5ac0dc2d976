import { inject, injectable, named } from 'inversify';
import { NamedGenerator, XdsGenerator, XdsGeneratorToken } from '../model/generator';
import { ContributionProvider } from '../plugins/contribution-provider';
import { GrpcGenerator } from './grpc/generator';
import { NameTableGenerator, withNameTable } from './nds';
import { SidecarGenerator } from './sidecar';

/**
 * The generators by node metadata GENERATOR (`''` = Envoy sidecars and the built-in proxy,
 * `grpc` = proxyless gRPC), plus those plugins contribute (which may replace ours); each also
 * serves the name table (NDS), which is the agent's whatever proxy it runs.
 */
@injectable()
export class XdsGenerators {
  readonly byName: ReadonlyMap<string, XdsGenerator>;

  constructor(
    @inject(SidecarGenerator) sidecar: SidecarGenerator,
    @inject(GrpcGenerator) grpc: GrpcGenerator,
    @inject(NameTableGenerator) nameTables: NameTableGenerator,
    @inject(ContributionProvider) @named(XdsGeneratorToken) contributed: ContributionProvider<NamedGenerator>,
  ) {
    const generators = new Map<string, XdsGenerator>([
      ['', sidecar],
      ['grpc', grpc],
    ]);
    for (const named of contributed.getContributions()) generators.set(named.generatorName, named.generator);
    for (const [name, generator] of generators) generators.set(name, withNameTable(generator, nameTables));
    this.byName = generators;
  }
}
