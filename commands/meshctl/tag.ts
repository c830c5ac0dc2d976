import { Args } from '@oclif/core';
import { boolFlag, command, GroupCommand, NotYetImplementedCommand, stringFlag } from '../../src/modules/cli';
import { outputFormatFlag } from './flag-types';

const revisionTagArgs = { 'revision-tag': Args.string({ required: true, description: 'name of the revision tag' }) };

const skipConfirmation = { 'skip-confirmation': boolFlag('do not ask for confirmation', { char: 'y' }) };

/** Flags of `tag generate`, which `tag set` takes too ("as tag generate"). */
const tagGenerateFlags = {
  'auto-inject-namespaces': boolFlag('make namespaces labeled for injection use the tagged revision'),
  manifests: stringFlag('directory of the charts and profiles', { char: 'd' }),
  overwrite: boolFlag('replace an existing tag of the same name'),
  revision: stringFlag('control plane revision the tag points to', { char: 'r' }),
  ...skipConfirmation,
  'webhook-name': stringFlag('name of the injection webhook the tag creates'),
};

@command({
  program: 'meshctl',
  path: 'tag',
  summary: 'Manage revision tags: mutable aliases of control plane revisions used for injection',
  description:
    'To use a tag, label a namespace with mesh.io/rev=<revision-tag>, then restart its workloads ' +
    'so they move to the revision the tag references.',
  group: true,
})
export class Tag extends GroupCommand {}

@command({
  program: 'meshctl',
  path: 'tag generate',
  summary: 'Print a revision tag as YAML',
  usage: 'tag generate <revision-tag>',
  flags: tagGenerateFlags,
  args: revisionTagArgs,
})
export class TagGenerate extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'tag list',
  aliases: ['show'],
  summary: 'List the revision tags',
  flags: { output: outputFormatFlag(['table', 'json', 'yaml'], 'table') },
})
export class TagList extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'tag remove',
  aliases: ['delete'],
  summary: 'Remove a revision tag; injection breaks in namespaces that reference it',
  usage: 'tag remove <revision-tag>',
  flags: skipConfirmation,
  args: revisionTagArgs,
})
export class TagRemove extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'tag set',
  summary: 'Create or modify a revision tag; the tag "default" makes its revision handle cluster-wide injection and validation',
  usage: 'tag set <revision-tag> --revision <revision>',
  flags: tagGenerateFlags,
  args: revisionTagArgs,
})
export class TagSet extends NotYetImplementedCommand {}
