import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { containerSelected, Limiter, parsePodFilter, tarGz } from '../../../src/modules/bug-report';
import { ContainerRef } from '../../../src/modules/bug-report/filter';
import { byPriority, linesUntil, rankLog } from '../../../src/modules/bug-report/logs';
import { redactSecret } from '../../../src/modules/bug-report/redact';

describe('bug-report parts', () => {
  describe('include/exclude filters (usage rule 4)', () => {
    const web: ContainerRef = { namespace: 'shop', deployment: 'web', pod: 'web-7f-abc', labels: { app: 'web', tier: 'front' }, annotations: { team: 'a' }, container: 'mesh-proxy' };
    const sel = (include: string[], exclude: string[], c = web) => containerSelected(include.map((t) => parsePodFilter(t, '--include')), exclude.map((t) => parsePodFilter(t, '--exclude')), c);

    it('matches each given part, with * in names and values, omitted parts matching all', () => {
      expect(sel([], [])).to.equal(true);
      expect(sel(['shop'], [])).to.equal(true);
      expect(sel(['sh*p/web'], [])).to.equal(true);
      expect(sel(['other,shop/web/web-*'], [])).to.equal(true);
      expect(sel(['shop/api'], [])).to.equal(false);
      expect(sel(['///app=web,tier=fr*'], [])).to.equal(true);
      expect(sel(['///app=web,tier=back'], []), 'every label pair must match').to.equal(false);
      expect(sel(['////team=a/mesh-*'], [])).to.equal(true);
      expect(sel(['/////app'], [])).to.equal(false);
      expect(sel([], ['shop'])).to.equal(false);
      expect(sel(['shop'], ['/web/'])).to.equal(false);
      expect(sel(['nope', 'shop'], ['kube-system'])).to.equal(true);
      expect(sel(['/web'], [], { ...web, deployment: undefined }), 'a pod of no deployment').to.equal(false);
    });

    it('refuses malformed filters with the filter and the part named', () => {
      const err = (t: string) => {
        try {
          parsePodFilter(t, '--include');
          return '';
        } catch (e) {
          return (e as Error).message;
        }
      };
      expect(err('a/b/c/d=e/f=g/h/i')).to.match(/has 7 parts/);
      expect(err('ns/dep/pod/novalue')).to.equal('--include filter "ns/dep/pod/novalue": label "novalue" is not key=value');
      expect(err('ns$')).to.match(/namespace "ns\$" may only have/);
      expect(err('////=v')).to.match(/annotation key "" may only have/);
      expect(err('x'.repeat(5000))).to.match(/longer than 4096 characters/);
    });
  });

  it('Limiter keeps at most its limit of tasks in flight and runs them all', async () => {
    const limiter = new Limiter(3);
    let running = 0;
    let peak = 0;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        limiter.run(async () => {
          running++;
          peak = Math.max(peak, running);
          await new Promise((r) => setTimeout(r, 1 + (i % 4)));
          running--;
          return i;
        }),
      ),
    );
    expect(results).to.deep.equal(Array.from({ length: 20 }, (_, i) => i));
    expect(peak).to.equal(3);
    expect(limiter.peak).to.equal(3);
  });

  it('tarGz writes an archive the real tar reads, long paths included', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bug-report-tar-'));
    try {
      const long = `bug-report/${'d'.repeat(90)}/${'e'.repeat(60)}/file.log`;
      const file = path.join(dir, 'a.tar.gz');
      fs.writeFileSync(file, tarGz([{ path: 'bug-report/a.txt', data: Buffer.from('hello\n') }, { path: long, data: Buffer.alloc(1000, 'x') }, { path: 'bug-report/empty', data: Buffer.alloc(0) }]));
      expect(execFileSync('tar', ['-tzf', file], { encoding: 'utf8' }).trim().split('\n')).to.deep.equal(['bug-report/a.txt', long, 'bug-report/empty']);
      expect(execFileSync('tar', ['-xzOf', file, 'bug-report/a.txt'], { encoding: 'utf8' })).to.equal('hello\n');
      expect(execFileSync('tar', ['-xzOf', file, long], { encoding: 'utf8' })).to.equal('x'.repeat(1000));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('logs: the window cut by timestamps, and ranking by critical then other errors', () => {
    const text = '2024-01-01T00:00:00.000000001Z a\n2024-01-01T00:00:05Z error b\n2024-01-01T00:00:09Z c\n';
    expect(linesUntil(text, new Date('2024-01-01T00:00:05Z'))).to.equal('a\nerror b\n');
    const crit = [/^.*expired.*$/i];
    const ign = [/^.*noisy.*$/i];
    const a = rankLog('a', 'error noisy\nerror noisy\nerror x\n', crit, ign);
    const b = rankLog('b', 'ERROR cert expired\ninfo fine\n', crit, ign);
    expect(a).to.deep.equal({ path: 'a', critical: 0, errors: 1 });
    expect(b).to.deep.equal({ path: 'b', critical: 1, errors: 1 });
    expect([a, b].sort(byPriority).map((r) => r.path)).to.deep.equal(['b', 'a']);
  });

  it('redactSecret replaces every value and the last-applied copy, keeping keys', () => {
    const s = redactSecret({ metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"data":{"k":"djE="}}', other: 'kept' } }, data: { k: 'djE=', j: 'djI=' } });
    expect(s.data).to.deep.equal({ k: '<redacted>', j: '<redacted>' });
    expect(s.metadata!.annotations).to.deep.equal({ 'kubectl.kubernetes.io/last-applied-configuration': '<redacted>', other: 'kept' });
  });
});
