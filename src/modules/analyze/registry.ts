import { inject, injectable, named } from 'inversify';
import { KindRegistry, KindRegistryToken } from '../config';
import { ContributionProvider } from '../plugins';
import { Analyzer, AnalyzerContribution } from './analyzer';
import { MessageCatalogue } from './catalogue';
import { schemaAnalyzers } from './schema-analyzer';

/** Every analyzer: the contributed ones and one schema analyzer per mesh kind, by name. */
@injectable()
export class AnalyzerRegistry {
  private cached: Analyzer[] | undefined;
  private catalogueCache: MessageCatalogue | undefined;

  constructor(
    @inject(ContributionProvider) @named(AnalyzerContribution) private readonly contributed: ContributionProvider<Analyzer>,
    @inject(KindRegistryToken) readonly kinds: KindRegistry,
  ) {}

  all(): Analyzer[] {
    this.cached ??= [...this.contributed.getContributions(), ...schemaAnalyzers(this.kinds)].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    return this.cached;
  }

  catalogue(): MessageCatalogue {
    this.catalogueCache ??= MessageCatalogue.load();
    return this.catalogueCache;
  }
}
