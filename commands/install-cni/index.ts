import { completionCommands, versionCommand } from '../../src/modules/cli';

export const COMMANDS = [versionCommand('install-cni'), ...completionCommands('install-cni')];
