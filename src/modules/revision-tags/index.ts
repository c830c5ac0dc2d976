export { DEFAULT_TAG, DEFAULT_VALIDATOR_NAME, TAG_LABEL, tagWebhookName } from './names';
export { buildDefaultValidator, buildTagWebhook, TagWebhookOptions } from './tag-webhooks';
export { formatTags, RevisionTags, SetOutcome, TagInfo, TagObjects, TagRequest, tagYaml } from './revision-tags';
export { readManifestsDir } from './manifests-dir';
export { revisionTagsModule } from './module';
