import { completionCommands, versionCommand } from '../../src/modules/cli';

export const COMMANDS = [versionCommand('pilot-agent'), ...completionCommands('pilot-agent')];
