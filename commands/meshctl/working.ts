import { completionCommands } from '../../src/modules/cli';
import { Meshctl } from './root';

/** meshctl commands that share code with the other programs or are written by hand here. */
export const WORKING_COMMANDS = [Meshctl, ...completionCommands('meshctl')];
