import { completionCommands, versionCommand } from '../../src/modules/cli';
import { MeshIptables } from './mesh-iptables';
import { Proxy } from './proxy';
import { Request } from './request';
import { PilotAgent } from './root';
import { Wait } from './wait';

export const COMMANDS = [PilotAgent, Proxy, Request, Wait, MeshIptables, versionCommand('pilot-agent'), ...completionCommands('pilot-agent')];
