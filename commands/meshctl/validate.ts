import { command, listFlag, NotYetImplementedCommand } from '../../src/modules/cli';

@command({
  program: 'meshctl',
  path: 'validate',
  aliases: ['v'],
  summary: 'Validate mesh policy and rule files',
  usage: 'validate -f FILENAME [options]',
  flags: { filename: listFlag('file or directory to validate; - reads stdin', { char: 'f' }) },
})
export class Validate extends NotYetImplementedCommand {}
