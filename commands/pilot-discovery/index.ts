import { completionCommands, versionCommand } from '../../src/modules/cli';
import { Discovery } from './discovery';
import { Request } from './request';
import { PilotDiscovery } from './root';

export const COMMANDS = [PilotDiscovery, Discovery, Request, versionCommand('pilot-discovery'), ...completionCommands('pilot-discovery')];
