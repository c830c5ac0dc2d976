import { ContainerModule } from 'inversify';
import { declareContributionPoint } from '../plugins';
import { AnalyzerContribution } from './analyzer';
import { BUILT_IN_ANALYZERS } from './analyzers';
import { AnalyzerRegistry } from './registry';

/** The Analyzer contribution point, the mesh's own analyzers, and the registry over them. */
export function analyzeModule(): ContainerModule {
  return new ContainerModule((bind) => {
    declareContributionPoint(bind, AnalyzerContribution);
    for (const A of BUILT_IN_ANALYZERS) {
      bind(A).toSelf().inSingletonScope();
      bind(AnalyzerContribution).toService(A);
    }
    bind(AnalyzerRegistry).toSelf().inSingletonScope();
  });
}
