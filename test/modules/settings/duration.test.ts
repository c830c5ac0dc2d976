import { expect } from 'chai';
import { Duration } from '../../../src/modules/settings';

describe('Duration (the spec form, Go syntax)', () => {
  const cases: [string, bigint, string][] = [
    ['100ms', 100_000_000n, '100ms'],
    ['1h0m0s', 3_600_000_000_000n, '1h0m0s'],
    ['30s', 30_000_000_000n, '30s'],
    ['5m0s', 300_000_000_000n, '5m0s'],
    ['87600h0m0s', 87_600n * 3_600_000_000_000n, '87600h0m0s'],
    ['2562047h47m16.854775807s', (1n << 63n) - 1n, '2562047h47m16.854775807s'],
    ['1.5h', 5_400_000_000_000n, '1h30m0s'],
    ['0', 0n, '0s'],
    ['0s', 0n, '0s'],
    ['1500us', 1_500_000n, '1.5ms'],
    ['2µs', 2_000n, '2µs'],
    ['-3s', -3_000_000_000n, '-3s'],
  ];
  for (const [text, nanos, formatted] of cases) {
    it(`parses ${text} and formats it as ${formatted}`, () => {
      const d = Duration.parse(text);
      expect(d.nanos).to.equal(nanos);
      expect(d.toString()).to.equal(formatted);
    });
  }

  for (const bad of ['', 'fast', '10', '1x', 'ms', '1h 2m', '.s', '9999999999h']) {
    it(`rejects ${JSON.stringify(bad)}`, () => {
      expect(() => Duration.parse(bad)).to.throw(RangeError);
    });
  }

  it('converts to milliseconds and seconds', () => {
    expect(Duration.parse('1m0s').milliseconds).to.equal(60_000);
    expect(Duration.parse('250ms').seconds).to.equal(0.25);
  });
});
