import { injectable } from 'inversify';
import { AnalysisContext, Analyzer } from '../analyzer';
import { asArray, field } from '../objects';

/**
 * serviceentry.Analyzer: a ServiceEntry without addresses can only be told apart by host name,
 * so a port whose protocol is TCP or unset (no SNI, no Host header) needs addresses.
 */
@injectable()
export class ServiceEntryAddressesAnalyzer implements Analyzer {
  readonly metadata = {
    name: 'serviceentry.Analyzer',
    description: 'Checks the validity of ServiceEntry',
    inputs: ['ServiceEntry'],
  };

  analyze(ctx: AnalysisContext): void {
    for (const se of ctx.objects.of('ServiceEntry')) {
      if (asArray(field(se.raw, 'spec', 'addresses')).length > 0) continue;
      asArray(field(se.raw, 'spec', 'ports')).forEach((port, i) => {
        const protocol = field(port, 'protocol');
        if (protocol === undefined || protocol === null || protocol === '' || protocol === 'TCP') ctx.report('ServiceEntryAddressesRequired', se, [], `spec.ports[${i}]`);
      });
    }
  }
}
