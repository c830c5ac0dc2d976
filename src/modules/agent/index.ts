export { Agent, AgentStartError } from './agent';
export { AgentFlags, AgentFlagsToken, AgentOptions, agentOptions, DrainOptions } from './options';
export { agentModule } from './module';
