import 'reflect-metadata';
import { runProgram } from './run-program';
import { Program } from './modules/settings/types';

/** Entry point of the bin launchers. */
export function main(program: Program): void {
  runProgram(program, process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: Error) => {
      process.stderr.write(`Error: ${err?.stack ?? err}\n`);
      process.exitCode = 1;
    },
  );
}
