import { completionCommands, versionCommand } from '../../src/modules/cli';
import { InstallCni } from './root';

export const COMMANDS = [InstallCni, versionCommand('install-cni'), ...completionCommands('install-cni')];
