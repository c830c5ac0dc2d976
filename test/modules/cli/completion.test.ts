import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CompletionCommand, CompletionFlag, CompletionModel, generateCompletion, Shell } from '../../../src/modules/cli/completion';
import { completionLevels } from '../../../src/modules/cli/completion/common';
import { runCli } from '../../helpers/run-cli';

// A summary with everything the shells treat specially: quotes, $, backticks, brackets, a colon.
const TRICKY = `Show the proxy's "clusters": [name] $HOME \`id\``;

const namespace: CompletionFlag = { name: 'namespace', char: 'n', takesValue: true, summary: 'namespace to query' };
const debug: CompletionFlag = { name: 'debug', takesValue: false, summary: 'log more' };

const cmd = (path: string[], spellings: string[][], summary: string, flags: CompletionFlag[], subcommands: [string, string][] = []): CompletionCommand => ({
  path,
  spellings,
  summary,
  flags,
  subcommands: subcommands.map(([name, summary]) => ({ name, summary })),
});

/** Fixture tree: `pc` and `c` are aliases; `authz check` is a full alias path whose `authz` names no command. */
const MODEL: CompletionModel = {
  program: 'my-prog',
  commands: [
    cmd([], [[]], 'My program', [debug, namespace], [
      ['experimental', 'Experimental commands'],
      ['pc', 'Inspect proxy configuration'],
      ['proxy-config', 'Inspect proxy configuration'],
      ['version', 'Print the version'],
    ]),
    cmd(['proxy-config'], [['proxy-config'], ['pc']], 'Inspect proxy configuration', [debug, namespace], [
      ['c', TRICKY],
      ['cluster', TRICKY],
    ]),
    cmd(['proxy-config', 'cluster'], [['proxy-config', 'cluster'], ['proxy-config', 'c'], ['pc', 'cluster'], ['pc', 'c']], TRICKY, [
      { name: 'output', char: 'o', takesValue: true, options: ['json', 'yaml', 'short'], summary: "Output format: 'json' or 'yaml'" },
      { name: 'port', takesValue: true, summary: 'admin port' },
      { name: 'verbose', takesValue: false, summary: 'more detail' },
    ]),
    cmd(['version'], [['version']], 'Print the version', [{ name: 'short', char: 's', takesValue: false, summary: 'short form' }]),
    cmd(['experimental'], [['experimental']], 'Experimental commands', [debug], [['check', 'Check authorization']]),
    cmd(['experimental', 'check'], [['experimental', 'check'], ['authz', 'check']], 'Check authorization', [
      { name: 'file', char: 'f', takesValue: true, summary: 'policy file' },
    ]),
  ],
};

const WITH = { descriptions: true };
const WITHOUT = { descriptions: false };

function hasShell(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
}

function skipWithout(ctx: Mocha.Context, shell: string): void {
  if (!hasShell(shell)) {
    console.log(`      (skipped: ${shell} is not installed; apt-get install -y ${shell} to run it)`);
    ctx.skip();
  }
}

let tmp: string;
function scriptFile(shell: Shell, model: CompletionModel = MODEL, options = WITH): string {
  const file = path.join(tmp, `${shell}-${options.descriptions ? 'desc' : 'plain'}-${model.program}`);
  fs.writeFileSync(file, generateCompletion(shell, model, options));
  return file;
}

/** What bash puts in COMP_WORDS for a line: words split at blanks, with `=` and `:` words of their own. */
function bashWords(line: string): string[] {
  return line.split(' ').flatMap((word) => (word === '' ? [''] : word.split(/([=:])/).filter((piece) => piece !== '')));
}

/** Runs the bash completion function as bash would for `line` (cursor at its end) and returns COMPREPLY. */
function bashComplete(line: string, options: { cwd?: string; words?: string[]; wordbreaks?: string } = {}): string[] {
  const words = options.words ?? bashWords(line);
  const setBreaks = options.wordbreaks === undefined ? '' : `COMP_WORDBREAKS=${JSON.stringify(options.wordbreaks)};`;
  const out = execFileSync(
    'bash',
    [
      '-c',
      `source "$1"; ${setBreaks} COMP_LINE=$2; COMP_POINT=\${#2}; shift 2; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1));
       __my_prog_complete; printf '%s\\n' "\${COMPREPLY[@]}"`,
      'bash',
      scriptFile('bash'),
      line,
      ...words,
    ],
    { cwd: options.cwd ?? tmp, encoding: 'utf8' },
  );
  return out.split('\n').filter((l) => l !== '');
}

describe('shell completion scripts', () => {
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'completion-'));
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  describe('completion levels', () => {
    it('puts the root first and gives a level to alias-path words that name no command', () => {
      const levels = completionLevels(MODEL);
      expect(levels[0].spellings).to.deep.equal(['']);
      expect(levels[0].subcommands.map((w) => w.name)).to.deep.equal(['authz', 'experimental', 'pc', 'proxy-config', 'version']);
      const authz = levels.find((l) => l.spellings.includes('authz'));
      expect(authz?.subcommands).to.deep.equal([{ name: 'check', summary: 'Check authorization' }]);
      // `my-prog authz` is still the root command as far as flags go.
      expect(authz?.flags).to.deep.equal([debug, namespace]);
    });

    it('generates the same text for the same model', () => {
      for (const shell of ['bash', 'fish', 'powershell', 'zsh'] as Shell[]) {
        expect(generateCompletion(shell, MODEL, WITH)).to.equal(generateCompletion(shell, structuredClone(MODEL), WITH));
      }
    });
  });

  describe('bash', () => {
    it('passes bash -n and registers a valid function name for a dashed program name', () => {
      const script = generateCompletion('bash', MODEL, WITH);
      execFileSync('bash', ['-n', scriptFile('bash')]);
      expect(script).to.match(/^__my_prog_complete\(\) \{$/m);
      expect(script).to.contain("complete -o default -F __my_prog_complete 'my-prog'");
      expect(script).not.to.contain('_init_completion');
    });

    it('never shows descriptions, whatever the option says', () => {
      expect(generateCompletion('bash', MODEL, WITH)).to.equal(generateCompletion('bash', MODEL, WITHOUT));
      expect(generateCompletion('bash', MODEL, WITH)).not.to.contain('admin port');
    });

    const cases: [string, string[]][] = [
      ['my-prog ', ['authz', 'experimental', 'pc', 'proxy-config', 'version']],
      ['my-prog p', ['pc', 'proxy-config']],
      ['my-prog proxy-config ', ['c', 'cluster']],
      ['my-prog pc ', ['c', 'cluster']],
      ['my-prog pc c --o', ['--output']],
      ['my-prog pc c -', ['--output', '-o', '--port', '--verbose']],
      ['my-prog proxy-config c --p', ['--port']],
      ['my-prog pc c -o ', ['json', 'yaml', 'short']],
      ['my-prog pc c --output j', ['json']],
      // bash splits at `=`, and readline replaces only what follows it.
      ['my-prog pc c --output=', ['json', 'yaml', 'short']],
      ['my-prog pc c --output=y', ['yaml']],
      ['my-prog pc c -o json --', ['--output', '--port', '--verbose']],
      // Flags and their values are stepped over while walking the command words.
      ['my-prog --output=json pc ', ['c', 'cluster']],
      ['my-prog --output=json pc c --v', ['--verbose']],
      ['my-prog -n prod pc ', ['c', 'cluster']],
      ['my-prog --namespace=prod pc c -', ['--output', '-o', '--port', '--verbose']],
      ['my-prog -n pc ', ['authz', 'experimental', 'pc', 'proxy-config', 'version']],
      ['my-prog --debug pc ', ['c', 'cluster']],
      // A word that is no command is an argument: no more subcommands, flags of the last command.
      ['my-prog pc an-arg ', []],
      ['my-prog pc an-arg c', []],
      ['my-prog pc an-arg -', ['--debug', '--namespace', '-n']],
      ['my-prog -- ', []],
      ['my-prog version ', []],
      ['my-prog authz ', ['check']],
      ['my-prog authz check -', ['--file', '-f']],
    ];
    for (const [line, expected] of cases) {
      it(`completes "${line}<TAB>" to [${expected.join(' ')}]`, () => {
        expect(bashComplete(line)).to.deep.equal(expected);
      });
    }

    it('completes file names for a flag value without options', () => {
      const dir = fs.mkdtempSync(path.join(tmp, 'files-'));
      fs.writeFileSync(path.join(dir, 'ports.txt'), '');
      fs.mkdirSync(path.join(dir, 'pods'));
      fs.writeFileSync(path.join(dir, 'other'), '');
      expect(bashComplete('my-prog pc c --port po', { cwd: dir }).sort()).to.deep.equal(['pods', 'ports.txt']);
      expect(bashComplete('my-prog pc c --port=po', { cwd: dir }).sort()).to.deep.equal(['pods', 'ports.txt']);
    });

    it('returns whole `--flag=value` words when `=` does not break words', () => {
      expect(bashComplete('my-prog pc c --output=y', { words: ['my-prog', 'pc', 'c', '--output=y'], wordbreaks: ' ' })).to.deep.equal([
        '--output=yaml',
      ]);
    });
  });

  describe('zsh', () => {
    it('is a #compdef script that registers itself when sourced', () => {
      const script = generateCompletion('zsh', MODEL, WITH);
      expect(script.split('\n')[0]).to.equal('#compdef my-prog');
      expect(script).to.match(/^_my_prog\(\) \{$/m);
      expect(script).to.contain("compdef _my_prog 'my-prog'");
    });

    it('passes zsh -n', function () {
      skipWithout(this, 'zsh');
      execFileSync('zsh', ['-n', scriptFile('zsh', MODEL, WITH)]);
      execFileSync('zsh', ['-n', scriptFile('zsh', MODEL, WITHOUT)]);
    });

    it('shows summaries only with descriptions, escaped for _describe', () => {
      const withText = generateCompletion('zsh', MODEL, WITH);
      const withoutText = generateCompletion('zsh', MODEL, WITHOUT);
      expect(withText).to.contain(`'cluster:Show the proxy'\\''s "clusters": [name] $HOME \`id\`'`);
      expect(withoutText).to.contain("candidates=('c' 'cluster')");
      expect(withoutText).not.to.contain('admin port');
      expect(withoutText).not.to.contain('clusters');
    });

    /** Runs the completion function with zsh's completion builtins replaced by ones that print. */
    function zshComplete(line: string, options = WITH): string[] {
      const words = line.split(' ');
      const out = execFileSync(
        'zsh',
        [
          '-c',
          `compdef() { :; }
           _describe() { print -rl -- "\${(@P)\${@[-1]}}"; }
           compadd() { print -rl -- "\${(@P)\${@[-1]}}"; }
           _files() { print -r -- '<files>'; }
           compset() { :; }
           source "$1"; shift
           words=("$@"); CURRENT=$#
           _my_prog`,
          'zsh',
          scriptFile('zsh', MODEL, options),
          ...words,
        ],
        { encoding: 'utf8' },
      );
      return out.split('\n').filter((l) => l !== '');
    }

    it('offers candidates by walking the typed words', function () {
      skipWithout(this, 'zsh');
      expect(zshComplete('my-prog pc ', WITHOUT)).to.deep.equal(['c', 'cluster']);
      expect(zshComplete('my-prog pc ')).to.deep.equal([`c:${TRICKY}`, `cluster:${TRICKY}`]);
      expect(zshComplete('my-prog -n prod proxy-config c --', WITHOUT)).to.deep.equal(['--output', '-o', '--port', '--verbose']);
      expect(zshComplete('my-prog pc c -o ')).to.deep.equal(['json', 'yaml', 'short']);
      expect(zshComplete('my-prog pc c --output=')).to.deep.equal(['json', 'yaml', 'short']);
      expect(zshComplete('my-prog pc c --port ')).to.deep.equal(['<files>']);
      expect(zshComplete('my-prog pc an-arg ')).to.deep.equal(['<files>']);
      expect(zshComplete('my-prog authz ', WITHOUT)).to.deep.equal(['check']);
    });
  });

  describe('fish', () => {
    it('guards every candidate with a level condition', () => {
      const script = generateCompletion('fish', MODEL, WITH);
      expect(script).to.contain('function __my_prog_walk');
      expect(script).to.contain('commandline -opc');
      expect(script).to.match(/^complete -c my-prog -n '__my_prog_at_level \d+' -l output -s o -x -a 'json yaml short'/m);
    });

    it('passes fish --no-execute', function () {
      skipWithout(this, 'fish');
      execFileSync('fish', ['--no-execute', scriptFile('fish', MODEL, WITH)]);
      execFileSync('fish', ['--no-execute', scriptFile('fish', MODEL, WITHOUT)]);
    });

    /** fish's own answer for `line`, as `candidate<TAB>description` lines. */
    function fishComplete(line: string, options = WITH): string[] {
      const empty = fs.mkdtempSync(path.join(tmp, 'fish-cwd-'));
      const out = execFileSync('fish', ['-c', 'source $argv[1]; complete -C $argv[2]', scriptFile('fish', MODEL, options), line], {
        cwd: empty,
        encoding: 'utf8',
      });
      return out.split('\n').filter((l) => l !== '');
    }
    const names = (lines: string[]): string[] => lines.map((l) => l.split('\t')[0]).sort();

    it('completes subcommands, flags and flag values at the right level', function () {
      skipWithout(this, 'fish');
      expect(names(fishComplete('my-prog pc c --'))).to.deep.equal(['--output', '--port', '--verbose']);
      expect(names(fishComplete('my-prog '))).to.deep.equal(['authz', 'experimental', 'pc', 'proxy-config', 'version']);
      expect(names(fishComplete('my-prog proxy-config '))).to.deep.equal(['c', 'cluster']);
      expect(names(fishComplete('my-prog -n prod pc '))).to.deep.equal(['c', 'cluster']);
      expect(names(fishComplete('my-prog --output=json pc '))).to.deep.equal(['c', 'cluster']);
      expect(names(fishComplete('my-prog pc c -o '))).to.deep.equal(['json', 'short', 'yaml']);
      expect(names(fishComplete('my-prog pc c --output='))).to.deep.equal(['--output=json', '--output=short', '--output=yaml']);
      expect(names(fishComplete('my-prog pc an-arg '))).to.deep.equal([]);
      expect(names(fishComplete('my-prog authz '))).to.deep.equal(['check']);
    });

    it('shows summaries only with descriptions', function () {
      skipWithout(this, 'fish');
      expect(fishComplete('my-prog pc ')).to.deep.equal([`c\t${TRICKY}`, `cluster\t${TRICKY}`]);
      expect(fishComplete('my-prog pc ', WITHOUT)).to.deep.equal(['c', 'cluster']);
      expect(generateCompletion('fish', MODEL, WITHOUT)).not.to.contain(' -d ');
    });
  });

  describe('powershell', () => {
    const script = (): string => generateCompletion('powershell', MODEL, WITH);
    const plain = (): string => generateCompletion('powershell', MODEL, WITHOUT);

    it('registers a native argument completer returning CompletionResult objects', () => {
      expect(script()).to.contain("Register-ArgumentCompleter -Native -CommandName 'my-prog' -ScriptBlock {");
      expect(script()).to.contain('[System.Management.Automation.CompletionResult]::new(');
    });

    it('looks up every spelling of a command, aliases included', () => {
      const cluster = completionLevels(MODEL).findIndex((l) => l.spellings.includes('pc c'));
      for (const spelled of ['proxy-config cluster', 'proxy-config c', 'pc cluster', 'pc c']) {
        expect(script()).to.contain(`'${spelled}' { return ${cluster} }`);
      }
      expect(script()).to.contain(`'${cluster} --output' { 'json', 'yaml', 'short' }`);
      expect(script()).to.contain(`'${cluster} -o' { return 'options' }`);
      expect(script()).to.contain(`'${cluster} --port' { return 'any' }`);
    });

    it('shows summaries, quoted, only with descriptions', () => {
      expect(script()).to.contain(`@{ Name = 'cluster'; Summary = 'Show the proxy''s "clusters": [name] $HOME \`id\`' }`);
      expect(plain()).to.contain("@{ Name = 'cluster' }");
      expect(plain()).not.to.contain('Summary =');
      expect(plain()).not.to.contain('admin port');
    });

    it('balances its braces and parentheses outside strings and comments', () => {
      const depth = { '{': 0, '(': 0 };
      const text = script();
      for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (c === "'") {
          // '' inside a single-quoted string is an escaped quote.
          do i = text.indexOf("'", i + 1) + 1;
          while (text[i] === "'");
          i--;
        } else if (c === '"') {
          while (text[++i] !== '"') if (text[i] === '`') i++;
        } else if (c === '#') {
          i = text.indexOf('\n', i);
        } else if (c === '{' || c === '(') {
          depth[c]++;
        } else if (c === '}' || c === ')') {
          depth[c === '}' ? '{' : '(']--;
          expect(depth['{']).to.be.at.least(0);
          expect(depth['(']).to.be.at.least(0);
        }
      }
      expect(depth).to.deep.equal({ '{': 0, '(': 0 });
    });
  });

  describe('the real programs', () => {
    it('pilot-discovery completion bash prints a working script', async () => {
      const { code, stdout } = await runCli('pilot-discovery', ['completion', 'bash']);
      expect(code).to.equal(0);
      const file = path.join(tmp, 'pilot-discovery.bash');
      fs.writeFileSync(file, stdout);
      execFileSync('bash', ['-n', file]);
      const complete = (line: string): string[] =>
        execFileSync(
          'bash',
          ['-c', 'source "$1"; COMP_LINE=$2; COMP_POINT=${#2}; shift 2; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); __pilot_discovery_complete; printf "%s\\n" "${COMPREPLY[@]}"', 'bash', file, line, ...bashWords(line)],
          { encoding: 'utf8' },
        )
          .split('\n')
          .filter((l) => l !== '');
      expect(complete('pilot-discovery ')).to.include.members(['completion', 'version']);
      expect(complete('pilot-discovery completion ')).to.deep.equal(['bash', 'fish', 'powershell', 'zsh']);
      expect(complete('pilot-discovery completion zsh --no')).to.deep.equal(['--no-descriptions']);
    });

    it('meshctl completion zsh --no-descriptions prints a script without summaries', async function () {
      const { code, stdout } = await runCli('meshctl', ['completion', 'zsh', '--no-descriptions']);
      expect(code).to.equal(0);
      expect(stdout.split('\n')[0]).to.equal('#compdef meshctl');
      expect(stdout).to.contain("'bash' 'fish' 'powershell' 'zsh'");
      expect(stdout).not.to.contain('Generate the autocompletion script');
      if (hasShell('zsh')) {
        const file = path.join(tmp, 'meshctl.zsh');
        fs.writeFileSync(file, stdout);
        execFileSync('zsh', ['-n', file]);
      }
    });
  });
});
