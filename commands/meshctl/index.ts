import { WORKING_COMMANDS } from './working';

export const COMMANDS = [...WORKING_COMMANDS];
