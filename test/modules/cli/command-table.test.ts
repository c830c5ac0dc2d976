import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, Parser } from '@oclif/core';
import { parse } from 'yaml';
import { normalizeBooleanFlags } from '../../../src/modules/cli/argv';
import { CommandTree } from '../../../src/modules/cli/command-tree';
import { builtInCommands } from '../../../src/modules/cli/program-commands';
import { Duration } from '../../../src/modules/settings';
import { Program } from '../../../src/modules/settings/types';
import { REPO_ROOT } from '../../helpers/run-cli';

/** One flag as the spec gives it (test/fixtures/cli/<program>.yaml, transcribed from the spec). */
interface FlagSpec {
  name: string;
  short?: string;
  type: 'string' | 'int' | 'uint16' | 'float' | 'duration' | 'bool' | 'list' | 'array' | 'map' | 'level';
  default?: unknown;
}
interface ProgramSpec {
  program: Program;
  globalFlags: FlagSpec[];
  commands: { path: string; aliases: string[]; flags: FlagSpec[] }[];
  aliasesResolve: { typed: string; path: string }[];
}

const SAMPLE: Record<FlagSpec['type'], string | undefined> = {
  string: 'some-value',
  level: 'Warning',
  int: '7',
  uint16: '7',
  float: '1.5',
  duration: '45s',
  // One value: whether commas split it differs by flag (filters and --set values contain commas).
  list: 'a',
  array: 'a',
  map: 'k=v',
  bool: undefined,
};

function loadSpec(program: Program): ProgramSpec {
  const text = fs.readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'cli', `${program}.yaml`), 'utf8');
  return parse(text.replace(/<mesh_domain>/g, 'mesh.io')) as ProgramSpec;
}

/** A parsed flag value in the fixture's terms. */
function plain(value: unknown): unknown {
  if (value instanceof Duration) return value.toString();
  return value;
}

async function parseFlags(cls: Command.Class, argv: string[]) {
  const { flags } = await Parser.parse(normalizeBooleanFlags(argv, cls.flags), { flags: cls.flags, args: {}, strict: false });
  return flags as Record<string, unknown>;
}

function checkFlagDefinition(cls: Command.Class, spec: FlagSpec, where: string): void {
  const def = cls.flags?.[spec.name];
  expect(def, `${where}: flag --${spec.name} is missing`).to.exist;
  expect(def!.char, `${where}: short form of --${spec.name}`).to.equal(spec.short);
  if (spec.type === 'bool') expect(def!.type, `${where}: --${spec.name} is a switch`).to.equal('boolean');
  else expect(def!.type, `${where}: --${spec.name} takes a value`).to.equal('option');
  if (spec.type === 'list' || spec.type === 'array') expect((def as { multiple?: boolean }).multiple, `${where}: --${spec.name} is a list`).to.equal(true);
}

async function checkFlagParsing(cls: Command.Class, spec: FlagSpec, where: string): Promise<void> {
  const defaults = await parseFlags(cls, []);
  if (spec.default !== undefined) {
    const expected = spec.type === 'bool' ? spec.default : spec.default;
    expect(plain(defaults[spec.name]), `${where}: default of --${spec.name}`).to.deep.equal(expected);
  }
  // The flag takes a value of its type, by its long and its short form.
  // A flag with a fixed set of values is given one of them.
  const def = cls.flags?.[spec.name] as { options?: string[]; helpValue?: string };
  const choices = def.options ?? (def.helpValue?.includes('|') ? def.helpValue.split('|') : undefined);
  const sample = choices?.length ? choices[0] : SAMPLE[spec.type];
  const spellings = [`--${spec.name}`, ...(spec.short ? [`-${spec.short}`] : [])];
  for (const spelling of spellings) {
    const parsed = await parseFlags(cls, sample === undefined ? [spelling] : [spelling, sample]);
    const value = plain(parsed[spec.name]);
    if (spec.type === 'bool') expect(value, `${where}: ${spelling}`).to.equal(true);
    else if (spec.type === 'int' || spec.type === 'uint16') expect(value, `${where}: ${spelling}`).to.equal(7);
    else if (spec.type === 'float') expect(value, `${where}: ${spelling}`).to.equal(1.5);
    else if (spec.type === 'list' || spec.type === 'array') expect(value, `${where}: ${spelling}`).to.deep.equal(['a']);
    else if (spec.type === 'map') expect(value, `${where}: ${spelling}`).to.deep.equal({ k: 'v' });
    else expect(value, `${where}: ${spelling}`).to.equal(sample);
  }
  if (spec.type === 'bool' && spec.default === true) {
    const off = await parseFlags(cls, [`--${spec.name}=false`]);
    expect(off[spec.name], `${where}: --${spec.name}=false`).to.equal(false);
  }
}

for (const program of ['meshctl', 'pilot-discovery', 'pilot-agent', 'install-cni'] as Program[]) {
  describe(`${program}: command tree matches the spec table`, () => {
    const spec = loadSpec(program);
    let tree: CommandTree;
    before(() => {
      tree = new CommandTree(program, builtInCommands(program));
    });
    const resolve = (typed: string) => tree.resolve(typed === '' ? [] : typed.split(' '), new Set()).node?.path;

    for (const cmd of spec.commands) {
      const label = cmd.path === '' ? `${program} (root)` : `${program} ${cmd.path}`;
      it(`${label}: resolves${cmd.aliases.length ? `, as do ${cmd.aliases.join(', ')}` : ''}`, () => {
        expect(tree.find(cmd.path), `${label} is not defined`).to.exist;
        expect(resolve(cmd.path)).to.equal(cmd.path);
        for (const alias of cmd.aliases) expect(resolve(alias), `alias "${alias}"`).to.equal(cmd.path);
      });
      it(`${label}: has every flag of the table (and the global ones) with its short form and default`, async () => {
        const node = tree.find(cmd.path);
        expect(node, `${label} is not defined`).to.exist;
        for (const flag of [...spec.globalFlags, ...cmd.flags]) {
          checkFlagDefinition(node!.cls, flag, label);
          await checkFlagParsing(node!.cls, flag, label);
        }
      });
    }

    if (spec.aliasesResolve.length > 0) {
      it('resolves aliases of groups for their subcommands', () => {
        for (const { typed, path: expected } of spec.aliasesResolve) expect(resolve(typed), `"${typed}"`).to.equal(expected);
      });
    }
  });
}
