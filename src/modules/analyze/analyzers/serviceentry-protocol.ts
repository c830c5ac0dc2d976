import { injectable } from 'inversify';
import { AnalysisContext, Analyzer } from '../analyzer';
import { AnalysisObject, asArray, field } from '../objects';
import { fullName } from './common';

/**
 * serviceentry.ConflictingServiceEntryProtocolAnalyzer: ServiceEntries declaring the same host
 * and port with different protocols leave the proxy one listener for two meanings.
 */
@injectable()
export class ConflictingServiceEntryProtocolAnalyzer implements Analyzer {
  readonly metadata = {
    name: 'serviceentry.ConflictingServiceEntryProtocolAnalyzer',
    description: 'Checks that ServiceEntries declaring the same host and port agree on the protocol',
    inputs: ['ServiceEntry'],
  };

  analyze(ctx: AnalysisContext): void {
    const byHostPort = new Map<string, { host: string; port: number; uses: Array<{ se: AnalysisObject; protocol: string }> }>();
    for (const se of ctx.objects.of('ServiceEntry')) {
      const hosts = asArray(field(se.raw, 'spec', 'hosts')).filter((h): h is string => typeof h === 'string');
      for (const p of asArray(field(se.raw, 'spec', 'ports'))) {
        const port = field(p, 'number');
        if (typeof port !== 'number') continue;
        const protocol = String(field(p, 'protocol') ?? '').toUpperCase();
        for (const host of hosts) {
          const key = `${host}:${port}`;
          if (!byHostPort.has(key)) byHostPort.set(key, { host, port, uses: [] });
          byHostPort.get(key)!.uses.push({ se, protocol });
        }
      }
    }
    for (const { host, port, uses } of byHostPort.values()) {
      const protocols = [...new Set(uses.map((u) => u.protocol))].sort();
      if (protocols.length < 2) continue;
      const entries = [...new Set(uses.map((u) => u.se))];
      const names = entries.map(fullName).sort().join(', ');
      for (const se of entries) ctx.report('ConflictingServiceEntryProtocol', se, [names, host, port, protocols.join(', ')], 'spec.ports');
    }
  }
}
