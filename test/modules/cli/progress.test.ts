import { Writable } from 'node:stream';
import { expect } from 'chai';
import { terminalProgress, withProgress } from '../../../src/modules/cli';

/** A stderr stand-in: records what is written; a terminal or not. */
function fakeStderr(isTTY: boolean): NodeJS.WriteStream & { text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, cb) {
      text += chunk.toString();
      cb();
    },
  }) as unknown as NodeJS.WriteStream & { text: () => string };
  Object.assign(stream, { isTTY, columns: 40, text: () => text });
  return stream;
}

describe('cli: terminal progress', () => {
  it('draws a spinner line on a terminal, replaces its text, clears it when done', async () => {
    const tty = fakeStderr(true);
    const progress = terminalProgress('opening port-forward to pod a', tty);
    await new Promise((r) => setTimeout(r, 300));
    progress.update('waiting for the daemon and a text far longer than the forty columns of this terminal');
    progress.done();
    progress.update('after done');
    progress.done();
    const frames = tty.text().split('\r\x1b[2K');
    expect(frames[1]).to.equal('| opening port-forward to pod a');
    expect(frames.length).to.be.greaterThan(3);
    // Cut to the terminal's width (40 columns: spinner, space, 34 characters and "...").
    expect(frames).to.include('| waiting for the daemon and a text ...'.replace('|', frames.find((f) => f.includes('waiting'))![0]));
    expect(frames.filter((f) => f.includes('waiting')).every((f) => f.length <= 39)).to.equal(true);
    expect(frames.at(-1)).to.equal('');
    expect(tty.text()).to.not.include('after done');
  });

  it('writes nothing when stderr is not a terminal', async () => {
    const piped = fakeStderr(false);
    const result = await withProgress('working', async () => {
      await new Promise((r) => setTimeout(r, 150));
      return 42;
    }, piped);
    expect(result).to.equal(42);
    expect(piped.text()).to.equal('');
  });

  it('clears the line when the work fails', async () => {
    const tty = fakeStderr(true);
    let failure: unknown;
    await withProgress('working', async () => Promise.reject(new Error('boom')), tty).catch((err) => (failure = err));
    expect((failure as Error).message).to.equal('boom');
    expect(tty.text().endsWith('\r\x1b[2K')).to.equal(true);
  });
});
