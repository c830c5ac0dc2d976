import { Args } from '@oclif/core';
import { boolFlag, command, confirm, GroupCommand, MeshCommand, stringFlag } from '../../src/modules/cli';
import { OrchClientOptionsToken } from '../../src/modules/orch';
import { MeshctlOrchFlags, meshctlOrchOptions } from '../../src/modules/orch-access';
import { formatTags, readManifestsDir, RevisionTags, TagRequest, tagYaml } from '../../src/modules/revision-tags';
import { outputFormatFlag } from './flag-types';
import { withOrchAccess } from './orch-access-scope';

const revisionTagArgs = { 'revision-tag': Args.string({ required: true, description: 'name of the revision tag' }) };

const skipConfirmation = { 'skip-confirmation': boolFlag('do not ask for confirmation', { char: 'y' }) };

/** Flags of `tag generate`, which `tag set` takes too ("as tag generate"). */
const tagGenerateFlags = {
  'auto-inject-namespaces': boolFlag('default tag only: inject every namespace not labelled otherwise'),
  manifests: stringFlag('directory of rendered manifests holding the revision\'s webhook configurations (instead of the cluster\'s)', { char: 'd' }),
  overwrite: boolFlag('replace an existing tag of the same name'),
  revision: stringFlag('control plane revision the tag points to', { char: 'r' }),
  ...skipConfirmation,
  'webhook-name': stringFlag('name of the injection webhook configuration the tag creates (default mesh-revision-tag-<tag>)'),
};

type TagFlags = MeshctlOrchFlags & {
  'auto-inject-namespaces'?: boolean;
  manifests?: string;
  overwrite?: boolean;
  revision?: string;
  'skip-confirmation'?: boolean;
  'webhook-name'?: string;
};

function tagRequest(tag: string, flags: TagFlags): TagRequest {
  return {
    tag,
    revision: flags.revision ?? '',
    webhookName: flags['webhook-name'],
    autoInjectNamespaces: flags['auto-inject-namespaces'],
    overwrite: flags.overwrite,
    manifests: flags.manifests ? readManifestsDir(flags.manifests) : undefined,
    confirm: flags['skip-confirmation'] ? undefined : (q) => confirm(q),
  };
}

abstract class TagCommand extends MeshCommand {
  /** Runs `work` with the tags service on the orchestrator meshctl's flags name. */
  protected withTags<T>(flags: MeshctlOrchFlags, work: (tags: RevisionTags) => Promise<T>): Promise<T> {
    return withOrchAccess(this.scope, flags, () => work(this.tagsService(flags)));
  }

  protected tagsService(flags: MeshctlOrchFlags): RevisionTags {
    return this.scope.resolve(RevisionTags, [[OrchClientOptionsToken, meshctlOrchOptions(flags)]]);
  }
}

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
  summary: 'Print a revision tag as YAML (nothing changes on the cluster); checked as tag set checks it',
  usage: 'tag generate <revision-tag>',
  flags: tagGenerateFlags,
  args: revisionTagArgs,
})
export class TagGenerate extends TagCommand {
  async run(): Promise<void> {
    const { flags, args } = await this.parse(TagGenerate);
    const request = tagRequest(args['revision-tag'], flags as TagFlags);
    // Rendered manifests need no cluster (nor its checks); on a cluster, usage rule 2 holds as for `tag set`,
    // and a change namespaces would feel is said on stderr unless -y.
    const warn = flags['skip-confirmation'] ? undefined : (message: string) => process.stderr.write(`${message}\n`);
    const objects = request.manifests ? await this.tagsService(flags as MeshctlOrchFlags).generate(request) : await this.withTags(flags as MeshctlOrchFlags, (tags) => tags.preview(request, warn));
    process.stdout.write(tagYaml(objects));
  }
}

@command({
  program: 'meshctl',
  path: 'tag list',
  aliases: ['show'],
  summary: 'List the revision tags, the revision each points to and the namespaces using it',
  flags: { output: outputFormatFlag(['table', 'json', 'yaml'], 'table') },
})
export class TagList extends TagCommand {
  async run(): Promise<void> {
    const { flags } = await this.parse(TagList);
    const list = await this.withTags(flags as MeshctlOrchFlags, (tags) => tags.list());
    process.stdout.write(formatTags(list, (flags.output ?? 'table') as 'table' | 'json' | 'yaml'));
  }
}

@command({
  program: 'meshctl',
  path: 'tag remove',
  aliases: ['delete'],
  summary: 'Remove a revision tag; injection breaks in namespaces that reference it',
  usage: 'tag remove <revision-tag>',
  flags: skipConfirmation,
  args: revisionTagArgs,
})
export class TagRemove extends TagCommand {
  async run(): Promise<void> {
    const { flags, args } = await this.parse(TagRemove);
    const tag = args['revision-tag'];
    const outcome = await this.withTags(flags as MeshctlOrchFlags, (tags) => tags.remove(tag, flags['skip-confirmation'] ? undefined : (q) => confirm(q)));
    if (!outcome.removed) {
      process.stdout.write('Aborting operation.\n');
      return;
    }
    process.stdout.write(`Revision tag ${tag} removed\n`);
  }
}

@command({
  program: 'meshctl',
  path: 'tag set',
  summary: 'Create or modify a revision tag; the tag "default" makes its revision handle cluster-wide injection and validation',
  usage: 'tag set <revision-tag> --revision <revision>',
  flags: tagGenerateFlags,
  args: revisionTagArgs,
})
export class TagSet extends TagCommand {
  async run(): Promise<void> {
    const { flags, args } = await this.parse(TagSet);
    const tag = args['revision-tag'];
    const request = tagRequest(tag, flags as TagFlags);
    const outcome = await this.withTags(flags as MeshctlOrchFlags, (tags) => tags.set(request));
    if (!outcome.applied) {
      process.stdout.write(`${outcome.reason}\n`);
      return;
    }
    process.stdout.write(
      `Revision tag ${JSON.stringify(tag)} created, referencing control plane revision ${JSON.stringify(request.revision)}. ` +
        `To enable injection using this revision tag, use 'kubectl label namespace <NAMESPACE> mesh.io/rev=${tag}'\n`,
    );
  }
}
