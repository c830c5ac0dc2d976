import { Interfaces, loadHelpClass } from '@oclif/core';

/** oclif's help with the program's help options; plain text unless stdout is a terminal. */
export async function createHelp(config: Interfaces.Config) {
  const Help = await loadHelpClass(config);
  return new Help(config, { ...config.pjson.oclif.helpOptions, stripAnsi: !process.stdout.isTTY });
}
