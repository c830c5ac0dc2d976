/**
 * Revision tags on the cluster: each is a MutatingWebhookConfiguration labelled
 * `mesh.io/tag=<tag>` and `mesh.io/rev=<revision>` (see tag-webhooks.ts). Namespaces use a tag
 * by the label `mesh.io/rev=<tag>`.
 */
import type * as k8s from '@kubernetes/client-node';
import { orchLibrary } from '../orch';
import { inject, injectable } from 'inversify';
import { stringify } from 'yaml';
import { apiErrorMessage, OrchClient, statusCodeOf } from '../orch';
import { UserError } from '../shared/user-error';
import { DEFAULT_INJECTOR_NAME, DEFAULT_TAG, DEFAULT_VALIDATOR_NAME, REVISION_LABEL, TAG_LABEL, checkTagName } from './names';
import { buildDefaultValidator, buildTagWebhook, deactivated, TagWebhookOptions } from './tag-webhooks';

export interface TagInfo {
  tag: string;
  revision: string;
  namespaces: string[];
}

/** The objects a tag consists of. */
export interface TagObjects {
  webhook: k8s.V1MutatingWebhookConfiguration;
  /** The `default` tag's validator. */
  validator?: k8s.V1ValidatingWebhookConfiguration;
}

export interface TagRequest extends TagWebhookOptions {
  overwrite?: boolean;
  /** Asked before changing a tag namespaces use; false aborts. */
  confirm?: (question: string) => Promise<boolean>;
  /** Rendered manifests to take the revision's webhook configurations from instead of the cluster. */
  manifests?: readonly unknown[];
}

export type SetOutcome = { applied: true; objects: TagObjects } | { applied: false; reason: string };

const byName = (a: { metadata?: { name?: string } }, b: { metadata?: { name?: string } }) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1);

@injectable()
export class RevisionTags {
  constructor(@inject(OrchClient) private readonly client: OrchClient) {}

  private get admission(): k8s.AdmissionregistrationV1Api {
    return this.client.api(orchLibrary().AdmissionregistrationV1Api);
  }

  /** Every tag with its revision and the namespaces labelled with it. */
  async list(): Promise<TagInfo[]> {
    const webhooks = await this.tagWebhooks();
    const namespaces = await this.namespaces();
    const tags = new Map<string, TagInfo>();
    for (const wh of webhooks) {
      const tag = wh.metadata?.labels?.[TAG_LABEL] ?? '';
      if (tags.has(tag)) continue;
      tags.set(tag, { tag, revision: wh.metadata?.labels?.[REVISION_LABEL] ?? '', namespaces: namespaces.filter((ns) => ns.metadata?.labels?.[REVISION_LABEL] === tag).map((ns) => ns.metadata!.name!).sort() });
    }
    // By revision, then tag (as the incumbent).
    return [...tags.values()].sort((a, b) => (a.revision !== b.revision ? (a.revision < b.revision ? -1 : 1) : a.tag < b.tag ? -1 : 1));
  }

  /** The tag's objects, built from the revision's webhook configurations; nothing changes. */
  async generate(request: TagRequest): Promise<TagObjects> {
    const tag = this.checkTag(request);
    const revision = request.revision;
    if (request.autoInjectNamespaces && tag !== DEFAULT_TAG) throw new UserError('--auto-inject-namespaces applies to the default tag only');
    const mutating = request.manifests ? ofKind<k8s.V1MutatingWebhookConfiguration>(request.manifests, 'MutatingWebhookConfiguration') : await this.listMutating(`${REVISION_LABEL}=${revision}`);
    const base = pickRevisionConfig(mutating, revision, 'mesh-sidecar-injector');
    if (!base) throw new UserError(`cannot find MutatingWebhookConfiguration with revision ${JSON.stringify(revision)} (label ${REVISION_LABEL}=${revision})${request.manifests ? ' in the manifests' : ''}`);
    const objects: TagObjects = { webhook: buildTagWebhook(base, { ...request, tag }) };
    if (tag === DEFAULT_TAG) {
      const validating = request.manifests ? ofKind<k8s.V1ValidatingWebhookConfiguration>(request.manifests, 'ValidatingWebhookConfiguration') : (await this.call('list ValidatingWebhookConfigurations', () => this.admission.listValidatingWebhookConfiguration({ labelSelector: `${REVISION_LABEL}=${revision}` }))).items;
      const validator = pickRevisionConfig(validating.filter((v) => v.metadata?.name !== DEFAULT_VALIDATOR_NAME), revision, 'mesh-validator');
      if (!validator) throw new UserError(`cannot find ValidatingWebhookConfiguration with revision ${JSON.stringify(revision)} (label ${REVISION_LABEL}=${revision}) to make the default validator`);
      objects.validator = buildDefaultValidator(validator, revision);
    }
    return objects;
  }

  /**
   * What `tag set` would apply, checked as it checks (usage rule 2), without changing anything:
   * `tag generate` against the cluster. `warn` hears when namespaces use a tag that would change.
   */
  async preview(request: TagRequest, warn?: (message: string) => void): Promise<TagObjects> {
    const { objects, users, current } = await this.checkedChange(request);
    if (users.length && warn) warn(changeWarning(request.tag, users, current, request.revision));
    return objects;
  }

  /**
   * Creates or replaces the tag (usage rule 2: an existing tag pointing to another revision
   * only with `overwrite`). Asks before changing a tag namespaces already use.
   */
  async set(request: TagRequest): Promise<SetOutcome> {
    const { objects, users, current, existing } = await this.checkedChange(request);
    const tag = request.tag;
    if (users.length && request.confirm && !(await request.confirm(`${changeWarning(tag, users, current, request.revision)}\nProceed with operation? [y/N]`))) {
      return { applied: false, reason: 'Aborting operation.' };
    }
    // A renamed webhook (--webhook-name) replaces the tag's old configuration.
    for (const old of existing) if (old.metadata?.name !== objects.webhook.metadata?.name) await this.deleteMutating(old.metadata!.name!);
    await this.upsertMutating(objects.webhook);
    if (objects.validator) await this.upsertValidating(objects.validator);
    if (tag === DEFAULT_TAG) await this.deactivateDefaultInjector();
    return { applied: true, objects };
  }

  /** Deletes the tag's objects. @returns the namespaces that still use it, when confirmed. */
  async remove(tagName: string, confirm?: (question: string) => Promise<boolean>): Promise<{ removed: boolean; namespaces: string[] }> {
    const tag = checkOrUserError(tagName);
    const webhooks = await this.tagWebhooks(tag);
    if (!webhooks.length) throw new UserError(`cannot remove tag ${JSON.stringify(tag)}: cannot find MutatingWebhookConfiguration for tag (label ${TAG_LABEL}=${tag})`);
    const users = await this.namespacesUsing(tag);
    if (users.length && confirm && !(await confirm(`Caution, found ${users.length} namespace(s) still injected by tag ${JSON.stringify(tag)}: ${users.join(' ')}\nProceed with operation? [y/N]`))) {
      return { removed: false, namespaces: users };
    }
    for (const wh of webhooks) await this.deleteMutating(wh.metadata!.name!);
    const validators = (await this.call('list ValidatingWebhookConfigurations', () => this.admission.listValidatingWebhookConfiguration({ labelSelector: `${TAG_LABEL}=${tag}` }))).items;
    for (const v of validators) await this.call(`delete ValidatingWebhookConfiguration ${v.metadata!.name}`, () => this.admission.deleteValidatingWebhookConfiguration({ name: v.metadata!.name! }));
    return { removed: true, namespaces: users };
  }

  /** The tag's objects after usage rule 2's checks, with the namespaces a revision change would move. */
  private async checkedChange(request: TagRequest): Promise<{ objects: TagObjects; users: string[]; current?: string; existing: k8s.V1MutatingWebhookConfiguration[] }> {
    const tag = this.checkTag(request);
    // The default revision's own injector is what the `default` tag takes over, not a clash.
    const revisions = tag === DEFAULT_TAG ? [] : (await this.listMutating(`${REVISION_LABEL}=${tag}`)).filter((wh) => wh.metadata?.labels?.[TAG_LABEL] === undefined);
    if (revisions.length) throw new UserError(`cannot create revision tag ${JSON.stringify(tag)}: a control plane revision of that name exists (MutatingWebhookConfiguration ${revisions[0].metadata?.name})`);
    const existing = await this.tagWebhooks(tag);
    const current = existing[0]?.metadata?.labels?.[REVISION_LABEL];
    const moves = existing.length > 0 && current !== request.revision;
    if (moves && !request.overwrite) {
      throw new UserError(`revision tag ${JSON.stringify(tag)} already exists, pointing to revision ${JSON.stringify(current)}; use --overwrite to point it to ${JSON.stringify(request.revision)}`);
    }
    const objects = await this.generate(request);
    return { objects, users: moves ? await this.namespacesUsing(tag) : [], current, existing };
  }

  /** Namespaces labelled `mesh.io/rev=<tag>`, by name. */
  async namespacesUsing(tag: string): Promise<string[]> {
    return (await this.namespaces(`${REVISION_LABEL}=${tag}`)).map((ns) => ns.metadata!.name!).sort();
  }

  private checkTag(request: TagRequest): string {
    const tag = checkOrUserError(request.tag);
    if (!request.revision) throw new UserError(`revision tag ${JSON.stringify(tag)} needs the revision it points to (--revision)`);
    return tag;
  }

  private async tagWebhooks(tag?: string): Promise<k8s.V1MutatingWebhookConfiguration[]> {
    return (await this.listMutating(tag ? `${TAG_LABEL}=${tag}` : TAG_LABEL)).sort(byName);
  }

  private async listMutating(labelSelector: string): Promise<k8s.V1MutatingWebhookConfiguration[]> {
    return (await this.call('list MutatingWebhookConfigurations', () => this.admission.listMutatingWebhookConfiguration({ labelSelector }))).items;
  }

  private async namespaces(labelSelector?: string): Promise<k8s.V1Namespace[]> {
    return (await this.call('list Namespaces', () => this.client.api(orchLibrary().CoreV1Api).listNamespace(labelSelector ? { labelSelector } : {}))).items;
  }

  private async deleteMutating(name: string): Promise<void> {
    await this.call(`delete MutatingWebhookConfiguration ${name}`, () => this.admission.deleteMutatingWebhookConfiguration({ name }));
  }

  private async upsertMutating(body: k8s.V1MutatingWebhookConfiguration): Promise<void> {
    const name = body.metadata!.name!;
    const current = await this.readOrUndefined(() => this.admission.readMutatingWebhookConfiguration({ name }));
    if (current) await this.call(`replace MutatingWebhookConfiguration ${name}`, () => this.admission.replaceMutatingWebhookConfiguration({ name, body: { ...body, metadata: { ...body.metadata, resourceVersion: current.metadata?.resourceVersion } } }));
    else await this.call(`create MutatingWebhookConfiguration ${name}`, () => this.admission.createMutatingWebhookConfiguration({ body }));
  }

  private async upsertValidating(body: k8s.V1ValidatingWebhookConfiguration): Promise<void> {
    const name = body.metadata!.name!;
    const current = await this.readOrUndefined(() => this.admission.readValidatingWebhookConfiguration({ name }));
    if (current) await this.call(`replace ValidatingWebhookConfiguration ${name}`, () => this.admission.replaceValidatingWebhookConfiguration({ name, body: { ...body, metadata: { ...body.metadata, resourceVersion: current.metadata?.resourceVersion } } }));
    else await this.call(`create ValidatingWebhookConfiguration ${name}`, () => this.admission.createValidatingWebhookConfiguration({ body }));
  }

  /** The non-revisioned injector selects nothing once the `default` tag serves its namespaces. */
  private async deactivateDefaultInjector(): Promise<void> {
    const current = await this.readOrUndefined(() => this.admission.readMutatingWebhookConfiguration({ name: DEFAULT_INJECTOR_NAME }));
    if (!current || current.metadata?.labels?.[TAG_LABEL] !== undefined) return;
    await this.call(`deactivate MutatingWebhookConfiguration ${DEFAULT_INJECTOR_NAME}`, () => this.admission.replaceMutatingWebhookConfiguration({ name: DEFAULT_INJECTOR_NAME, body: deactivated(current) }));
  }

  private async readOrUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
    try {
      return await read();
    } catch (err) {
      if (statusCodeOf(err) === 404) return undefined;
      throw new UserError(`cannot read webhook configuration: ${apiErrorMessage(err)}`);
    }
  }

  private async call<T>(what: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (err) {
      throw new UserError(`cannot ${what}: ${apiErrorMessage(err)}`);
    }
  }
}

function changeWarning(tag: string, users: readonly string[], from: string | undefined, to: string): string {
  return `Caution, found ${users.length} namespace(s) using tag ${JSON.stringify(tag)}: ${users.join(', ')}. Their new workloads will be injected by revision ${JSON.stringify(to)} instead of ${JSON.stringify(from)}.`;
}

function checkOrUserError(tag: string): string {
  try {
    return checkTagName(tag);
  } catch (err) {
    throw new UserError((err as Error).message);
  }
}

function ofKind<T>(objects: readonly unknown[], kind: string): T[] {
  return objects.filter((o): o is T => typeof o === 'object' && o !== null && (o as { kind?: unknown }).kind === kind);
}

/**
 * The revision's own configuration (not a tag's): labelled with the revision, preferring the
 * conventional name (`<prefix>-<revision>`, or `<prefix>` for the default revision).
 */
function pickRevisionConfig<T extends { metadata?: k8s.V1ObjectMeta }>(configs: readonly T[], revision: string, prefix: string): T | undefined {
  const own = configs.filter((c) => c.metadata?.labels?.[REVISION_LABEL] === revision && c.metadata?.labels?.[TAG_LABEL] === undefined).sort(byName);
  const wanted = revision === DEFAULT_TAG ? prefix : `${prefix}-${revision}`;
  return own.find((c) => c.metadata?.name === wanted) ?? own.find((c) => c.metadata?.name?.startsWith(prefix)) ?? own[0];
}

/** The tag's objects as a YAML stream (what `tag set` would apply). */
export function tagYaml(objects: TagObjects): string {
  return [objects.webhook, objects.validator].filter(Boolean).map((o) => stringify(o)).join('---\n');
}

/** `tag list` in the chosen format. */
export function formatTags(tags: readonly TagInfo[], output: 'table' | 'json' | 'yaml'): string {
  if (output === 'json') return `${JSON.stringify(tags, null, 2)}\n`;
  if (output === 'yaml') return stringify(tags);
  if (!tags.length) return 'No mesh revision tag MutatingWebhookConfigurations to list\n';
  const rows = tags.map((t) => [t.tag, t.revision, t.namespaces.join(',')]);
  const all = [['TAG', 'REVISION', 'NAMESPACES'], ...rows];
  const widths = [0, 1].map((i) => Math.max(...all.map((r) => r[i].length)));
  return `${all.map((r) => `${r[0].padEnd(widths[0])}  ${r[1].padEnd(widths[1])}  ${r[2]}`.trimEnd()).join('\n')}\n`;
}
