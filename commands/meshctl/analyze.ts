import { boolFlag, command, durationFlag, listFlag, NotYetImplementedCommand, stringFlag } from '../../src/modules/cli';
import { outputFormatFlag, severityFlag } from './flag-types';

@command({
  program: 'meshctl',
  path: 'analyze',
  summary: 'Analyze mesh configuration and print validation messages',
  usage: 'analyze [<file>...]',
  variadic: true,
  flags: {
    'all-namespaces': boolFlag('analyze all namespaces', { char: 'A' }),
    analyzer: listFlag('analyzer to run; repeatable; all run when absent'),
    color: boolFlag('color the output', { default: true }),
    'failure-threshold': severityFlag('lowest message severity that makes the exit code non-zero', 'Error'),
    'ignore-unknown': boolFlag('do not report input documents that cannot be parsed'),
    'list-analyzers': boolFlag('list the available analyzers instead of analyzing', { char: 'L' }),
    meshConfigFile: stringFlag('mesh config file overriding the mesh config used for analysis'),
    output: outputFormatFlag(['log', 'json', 'yaml'], 'log'),
    'output-threshold': severityFlag('lowest message severity to display', 'Info'),
    recursive: boolFlag('removed: directories are always searched recursively', { char: 'R', default: true }),
    'remote-contexts': listFlag('orchestrator config contexts of remote clusters to analyze too'),
    revision: stringFlag('control plane revision to analyze', { char: 'r', default: 'default' }),
    suppress: listFlag('suppress messages of a code on a resource, as <code>=<resource> (* allowed); repeatable', { char: 'S' }),
    timeout: durationFlag('how long analysis may take before it fails', { default: '30s' }),
    'use-orch': boolFlag('analyze against the live cluster; --use-orch=false analyzes the given files only', { char: 'k', default: true }),
    verbose: boolFlag('verbose output', { char: 'v' }),
  },
})
export class Analyze extends NotYetImplementedCommand {}
