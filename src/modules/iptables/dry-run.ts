import { tproxyRouteCommands } from './applier';
import { CaptureConfig } from './capture-config';
import { RuleSet } from './rule-set';

/** What a dry run prints: the iptables-restore input, IPv4 then IPv6, and the TPROXY routes as comments. */
export function dryRunText(rules: RuleSet, config: CaptureConfig): string {
  let text = rules.restoreInput(4);
  if (config.dualStack) text += rules.restoreInput(6);
  for (const command of tproxyRouteCommands(config)) text += `# then: ${command}\n`;
  return text;
}
