/**
 * Asks a yes/no question: the question on stdout, one answer line from stdin; only `y` or
 * `yes` proceeds. A closed or empty stdin answers no, so a script never proceeds by accident.
 */
export function confirm(question: string, input: NodeJS.ReadableStream = process.stdin, output: NodeJS.WritableStream = process.stdout): Promise<boolean> {
  output.write(`${question} `);
  return new Promise((resolve) => {
    let buffered = '';
    const finish = (answer: string) => {
      input.removeListener('data', onData);
      input.removeListener('end', onEnd);
      input.removeListener('error', onEnd);
      (input as NodeJS.ReadStream).pause?.();
      resolve(/^\s*y(es)?\s*$/i.test(answer));
    };
    const onData = (chunk: Buffer | string) => {
      buffered += chunk.toString();
      const newline = buffered.indexOf('\n');
      if (newline >= 0) finish(buffered.slice(0, newline));
      else if (buffered.length > 1024) finish('');
    };
    const onEnd = () => finish(buffered);
    input.on('data', onData);
    input.on('end', onEnd);
    input.on('error', onEnd);
    (input as NodeJS.ReadStream).resume?.();
  });
}
