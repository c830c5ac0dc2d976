import { expect } from 'chai';
import { spawn } from 'node:child_process';
import * as path from 'node:path';

const SINK = path.resolve(__dirname, '../../../src/modules/logging/sink.js');
const LINE = `${'x'.repeat(999)}\n`;
const LINES = 5000;

/**
 * Runs a program that logs LINES lines of 1,000 bytes to its stdout (a pipe, made non-blocking
 * as Node makes it once process.stdout is touched) while this side reads nothing for `stallMs`.
 */
function logThroughPipe(stallMs: number): Promise<{ code: number | null; out: string; err: string; ms: number }> {
  const program = `
    const { openSink } = require(${JSON.stringify(SINK)});
    process.stdout;
    const sink = openSink('stdout');
    const started = Date.now();
    // As a daemon logs: batches over a second, not all at once.
    let batch = 0;
    const next = () => {
      for (let i = 0; i < ${LINES / 50}; i++) sink.write(${JSON.stringify(LINE)});
      if (++batch < 50) setTimeout(next, 20);
      else process.stderr.write(String(Date.now() - started));
    };
    next();
  `;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', program], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d));
    child.stdout.pause();
    setTimeout(() => {
      child.stdout.on('data', (d: Buffer) => out.push(d));
      child.stdout.resume();
    }, stallMs);
    child.on('close', (code) => resolve({ code, out: Buffer.concat(out).toString(), err, ms: Number(err) }));
  });
}

describe('logging: the output sink', () => {
  it('gets every line through a non-blocking pipe whose reader keeps up', async () => {
    const { code, out, err } = await logThroughPipe(0);
    expect(code, err).to.equal(0);
    expect(out).to.equal(LINE.repeat(LINES));
  });

  it('neither throws nor stalls when the reader stops: lines that cannot wait are dropped, and counted once the output takes lines again', async () => {
    const { code, out, err, ms } = await logThroughPipe(500);
    // Before: fs.writeSync threw EAGAIN and the program ended with it.
    expect(code, err).to.equal(0);
    // Fifty batches 20 ms apart take a second; a wait per line dropped would take minutes.
    expect(ms, 'one wait of at most MAX_BLOCKED_MS per blocked spell, not one per line').to.be.below(5000);
    const lines = out.split('\n');
    expect(lines.pop(), 'the output ends with a whole line').to.equal('');
    let intact = 0;
    let dropped = 0;
    lines.forEach((line, i) => {
      const notice = /^\((\d+) log line\(s\) dropped: the log output was not taking lines\)$/.exec(line);
      if (notice) dropped += Number(notice[1]);
      else if (line === LINE.slice(0, -1)) intact += 1;
      // A line cut short is counted among the dropped ones, and the notice starts a new line after it.
      else expect(/^x+$/.test(line) && /dropped/.test(lines[i + 1] ?? ''), `line ${i}: ${line.slice(0, 60)}`).to.equal(true);
    });
    expect(dropped, 'the reader stalled long enough for lines to be dropped').to.be.greaterThan(0);
    expect(intact + dropped, 'every line is written or counted').to.equal(LINES);
  });
});
